package e2e

import (
	"strings"
	"testing"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAttachTextFiles: the server takes any UTF-8 text file as a text
// document (it sniffs the bytes, never the declared type), but the
// browser names a notes.md text/markdown, a .csv text/csv, a .json
// application/json, and an unknown extension nothing at all. The UI
// refused all of those as "not a supported file" without asking the
// server; it must pass them on and leave the verdict to the server,
// while still sparing the upload of a type the server never takes.
func TestAttachTextFiles(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Read them all.", 0))
	e.signIn()
	t.Run("TextTypes", func(t *testing.T) {
		e := e.sub(t)
		e.dropFile("# Plan\n\n- run on Monday\n", "plan.md", "text/markdown")
		e.dropFile("day,km\nmon,5\n", "runs.csv", "text/csv")
		e.dropFile(`{"goal":"5k"}`, "goal.json", "application/json")
		e.dropFile("shift notes\n", "shift.notes", "")
		e.waitJS("four uploads done", `document.querySelectorAll("#attach-tray li:not(.uploading)").length === 4 || !document.getElementById("attach-error").hidden`)
		if !eval[bool](e, `document.getElementById("attach-error").hidden`) {
			t.Fatalf("refused: %s", eval[string](e, `document.getElementById("attach-error").textContent`))
		}
		e.waitJS("the uploads to finish", `document.querySelectorAll("#attach-tray li").length === 4 && document.querySelectorAll("#attach-tray li.uploading, #attach-tray li.failed").length === 0`)
		e.send("Here are my files")
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Read them all.")`)
		e.waitIdle()
		docs := e.sentDocuments()
		if strings.Join(docs, ",") != "plan.md,runs.csv,goal.json,shift.notes" {
			t.Errorf("documents sent to the model = %v, want the four files", docs)
		}
	})
	t.Run("ErrRefused", func(t *testing.T) {
		e := e.sub(t)
		// A type the server never takes is refused here, without an upload.
		e.dropFile("PK\x03\x04", "plan.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document")
		e.waitVisible("#attach-error")
		if got := eval[string](e, `document.getElementById("attach-error").textContent`); !strings.Contains(got, "plan.docx") {
			t.Errorf("error line %q does not name the file", got)
		}
		// An unknown type whose bytes are not text: the server says no, and
		// the UI shows its word.
		e.dropFile("\x00\x01\x02binary", "blob.bin", "")
		e.waitJS("the refusal", `document.getElementById("attach-error").textContent.includes("blob.bin")`)
		if got := eval[string](e, `document.getElementById("attach-error").textContent`); !strings.Contains(got, "not a supported file") {
			t.Errorf("error line %q, want the server's reason", got)
		}
	})
}
