package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopToolInputAfterReload: Stop pressed while the coach is still
// writing a tool call's input (its card up, the input not finished)
// ends the turn. The card read "Stopped" live, but after a reload it was
// gone: the server kept the reply's text and dropped the call. The call
// is stored, answered "interrupted" as a call cut by max_tokens is, and
// the reloaded page shows the card as the live one did.
func TestStopToolInputAfterReload(t *testing.T) {
	e := newEnv(t, 1280, 800)
	input := `{"note_type":"preference","title":"Morning runs","content":"Prefers to run before work."}`
	e.fake.Enqueue(at.Blocks(at.TextBlock("Let me remember that.", 5), at.ToolUse("toolu_cut", "save_note", input, 10, 20, 30)).
		Paced(0, 30*time.Millisecond).StallAfter(12))
	e.signIn()
	e.send("I like to run in the morning")
	e.waitJS("the tool card", `document.querySelector(".tool-card[data-tool=save_note]") !== null`)
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
	card := `[...document.querySelectorAll(".tool-card")].map((c) => c.dataset.tool + ":" + c.dataset.state + ":" + c.querySelector(".tool-status").textContent).join(",")`
	live := eval[string](e, card)
	if live != "save_note:stopped:Stopped" {
		t.Fatalf("tool cards after Stop = %q, want save_note:stopped:Stopped", live)
	}
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.getElementById("transcript").textContent.includes("Let me remember that.")`)
	if got := eval[string](e, card); got != live {
		t.Errorf("tool cards after a reload = %q, want %q as they were live", got, live)
	}
}
