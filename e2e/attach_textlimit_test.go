package e2e

import (
	"strings"
	"testing"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAttachTextLimit: text documents may be at most 100 KiB a message,
// each and together (coachd.MaxTextAttachmentBytes), far under the 3 MB a
// file may be. A text file past it, or one that takes the message's text
// past it, is refused by name with the reason, and the files attached
// with it stay and are sent: the user drops one file, not the message.
func TestAttachTextLimit(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.signIn()
	settled := `document.querySelectorAll("#attach-tray li").length > 0 && document.querySelectorAll("#attach-tray li.uploading:not(.failed)").length === 0`
	ready := func(e *env) []string {
		return eval[[]string](e, `[...document.querySelectorAll("#attach-tray li:not(.failed):not(.uploading)")].map((li) => li.title)`)
	}
	// sentDocs sends the message and returns the titles of the documents
	// the model got with it.
	sentDocs := func(e *env, reply string) []string {
		e.t.Helper()
		e.fake.Enqueue(at.Text(reply, 0))
		e.send("Read these")
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("`+reply+`")`)
		e.waitIdle()
		if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
			e.t.Errorf("banner %q, want the message sent", got)
		}
		return e.sentDocuments()
	}
	t.Run("OneTooLong", func(t *testing.T) {
		e := e.sub(t)
		// The refused file goes last: a later drop starts the error line
		// afresh, and the server's refusal may come back before it.
		e.dropFile("shift notes\n", "notes.txt", "text/plain")
		e.dropFile("day,km\nmon,5\n", "runs.csv", "text/csv")
		e.dropFile(strings.Repeat("a long log line\n", 150<<10/16), "log.md", "text/markdown")
		e.waitJS("the uploads to settle", settled)
		if got := eval[string](e, `document.getElementById("attach-error").textContent`); !strings.Contains(got, "log.md") || !strings.Contains(got, "100 K") {
			t.Errorf("error line = %q, want log.md refused for the 100 KB limit", got)
		}
		if got := ready(e); strings.Join(got, ",") != "notes.txt,runs.csv" {
			t.Errorf("files ready to send = %v, want notes.txt and runs.csv", got)
		}
		if got := sentDocs(e, "Two files read."); strings.Join(got, ",") != "notes.txt,runs.csv" {
			t.Errorf("documents sent to the model = %v, want notes.txt and runs.csv", got)
		}
	})
	t.Run("TogetherTooLong", func(t *testing.T) {
		e := e.sub(t)
		half := strings.Repeat("0123456789abcde\n", 60<<10/16) // 60 KiB: each fits, two do not
		e.dropFile(half, "week1.txt", "text/plain")
		e.waitJS("the first upload", settled)
		e.dropFile("shift notes\n", "notes.txt", "text/plain")
		// log.md stays in the tray from above, failed: count the others.
		e.waitJS("the notes", settled+` && document.querySelectorAll("#attach-tray li:not(.failed)").length === 2`)
		e.dropFile(half, "week2.txt", "text/plain") // last, as log.md above
		e.waitJS("the uploads to settle", settled+` && document.querySelectorAll("#attach-tray li").length + (document.getElementById("attach-error").hidden ? 0 : 1) >= 3`)
		if got := eval[string](e, `document.getElementById("attach-error").textContent`); !strings.Contains(got, "week2.txt") || !strings.Contains(got, "100 K") {
			t.Errorf("error line = %q, want week2.txt refused for the 100 KB of text a message may hold", got)
		}
		if got := ready(e); strings.Join(got, ",") != "week1.txt,notes.txt" {
			t.Errorf("files ready to send = %v, want week1.txt and notes.txt", got)
		}
		if got := sentDocs(e, "Both read."); strings.Join(got, ",") != "week1.txt,notes.txt" {
			t.Errorf("documents sent to the model = %v, want week1.txt and notes.txt", got)
		}
	})
}
