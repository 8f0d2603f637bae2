package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopDuringToolCall: Stop pressed, on a phone, while the coach is
// calling a tool (its card up, saying "Running…", its input still being
// written) ends the turn before the call got a result. The card went on
// saying "Running…" after the turn was over; it now says the call was
// stopped. After a reload the card was gone: the server kept the reply's
// text and dropped the call. The call is stored, answered "interrupted"
// as a call cut by max_tokens is, and the reloaded page shows the card
// as the live one did.
func TestStopDuringToolCall(t *testing.T) {
	e := newEnv(t, 390, 844)
	input := `{"note_type":"preference","title":"Morning runs","content":"Prefers to run before work."}`
	e.fake.Enqueue(at.Blocks(at.TextBlock("Let me remember that.", 5), at.ToolUse("toolu_stop1", "save_note", input, 10, 20, 30)).
		Paced(0, 30*time.Millisecond).StallAfter(12))
	e.signIn()
	e.send("I like to run in the morning")
	e.waitJS("the tool card", `document.querySelector(".tool-card[data-tool=save_note]") !== null`)
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
	card := `[...document.querySelectorAll(".tool-card")].map((c) => c.dataset.tool + ":" + c.dataset.state + ":" + c.querySelector(".tool-status").textContent).join(",")`
	live := eval[string](e, card)
	if live != "save_note:stopped:Stopped" {
		t.Errorf("tool cards after Stop = %q, want save_note:stopped:Stopped", live)
	}
	if got := eval[string](e, `document.getElementById("transcript").textContent`); !strings.Contains(got, "Let me remember that.") {
		t.Errorf("transcript after Stop = %q, want the text before the call kept", got)
	}
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.getElementById("transcript").textContent.includes("Let me remember that.")`)
	if got := eval[string](e, card); got != live {
		t.Errorf("tool cards after a reload = %q, want %q as they were live", got, live)
	}
}
