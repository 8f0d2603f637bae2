package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestEscapeInNotesKeepsReply: Esc stops the reply from the chat, but
// pressed in the notes panel (to leave the note being written, or the
// panel) it is the panel's. It stopped the coach's reply wherever it was
// pressed, cutting the reply short on the server.
func TestEscapeInNotesKeepsReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := nightPlan
	e.replyUnderWay()
	e.openNotes()
	e.run(chromedp.Click(chromedp.CSS(".add-note")))
	e.waitJS("the note form focused", `document.activeElement?.name === "title"`)
	e.run(chromedp.KeyEvent("\u001b"))
	e.waitJS("the notes panel closed", `!document.body.classList.contains("notes-open")`)
	e.waitJS("the whole reply", `document.getElementById("transcript").textContent.includes("rest on Sunday.") || document.body.dataset.phase === "idle"`)
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".msg.assistant .md")?.textContent ?? ""`); got != reply {
		t.Errorf("reply = %q, want it whole", got)
	}
	if notes := eval[string](e, `[...document.querySelectorAll(".msg.assistant .msg-note")].map((n) => n.textContent).join("|")`); strings.Contains(notes, "Stopped") {
		t.Errorf("the reply is marked %q: Esc in the notes panel stopped it", notes)
	}
}
