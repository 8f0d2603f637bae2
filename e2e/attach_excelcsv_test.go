package e2e

import (
	"strings"
	"testing"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAttachExcelTypedCSV: a Windows browser types a .csv file
// application/vnd.ms-excel, which the UI refused as "not a supported
// file" without asking the server. It now leaves the verdict to the
// server, which reads the bytes: a CSV is sent as a text document, and a
// real workbook is refused with the server's reason (save it as CSV).
func TestAttachExcelTypedCSV(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Read it.", 0))
	e.signIn()
	t.Run("OK", func(t *testing.T) {
		e := e.sub(t)
		e.dropFile("day,km\nmon,5\n", "runs.csv", "application/vnd.ms-excel")
		e.waitJS("the upload", `document.querySelectorAll("#attach-tray li:not(.uploading)").length === 1 || !document.getElementById("attach-error").hidden`)
		if !eval[bool](e, `document.getElementById("attach-error").hidden`) {
			t.Fatalf("refused: %s", eval[string](e, `document.getElementById("attach-error").textContent`))
		}
		e.send("Here are my runs")
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Read it.")`)
		e.waitIdle()
		docs := e.sentDocuments()
		if strings.Join(docs, ",") != "runs.csv" {
			t.Errorf("documents sent to the model = %v, want runs.csv", docs)
		}
	})
	t.Run("ErrWorkbook", func(t *testing.T) {
		e := e.sub(t)
		xls := append([]byte{0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1}, make([]byte, 1024-8)...)
		copy(xls[512:], "W\x00o\x00r\x00k\x00b\x00o\x00o\x00k\x00")
		xls[512+0x40], xls[512+0x42] = 18, 2 // its name's length; a stream
		e.dropFile(string(xls), "runs.xls", "application/vnd.ms-excel")
		e.waitJS("the refusal", `document.getElementById("attach-error").textContent.includes("runs.xls")`)
		if got := eval[string](e, `document.getElementById("attach-error").textContent`); !strings.Contains(got, "Excel workbook") {
			t.Errorf("error line %q, want the server's reason", got)
		}
	})
}
