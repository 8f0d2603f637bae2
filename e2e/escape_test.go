package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestEscapeInNotesKeepsReply: Esc stops the reply from the chat, but
// pressed in the notes panel (to leave the note being written, or the
// panel) it is the panel's. It stopped the coach's reply wherever it was
// pressed, cutting the reply short on the server.
func TestEscapeInNotesKeepsReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "Start at the airport, then the stadium at ten, then downtown until two, and rest on Sunday."
	e.fake.Enqueue(at.Text(reply, 4).Paced(0, 40*time.Millisecond))
	e.signIn()
	e.send("Plan my night")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
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
