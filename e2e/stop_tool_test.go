package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopDuringToolCall: Stop pressed, on a phone, while the coach is
// calling a tool (its card up, saying "Running…") ends the turn before
// the call got a result. The card went on saying "Running…" after the
// turn was over; it now says the call was stopped.
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
	if got := eval[string](e, `[...document.querySelectorAll(".tool-card")].map((c) => c.dataset.state + ":" + c.querySelector(".tool-status").textContent).join(",")`); got != "stopped:Stopped" {
		t.Errorf("tool cards after Stop = %q, want stopped:Stopped", got)
	}
	if got := eval[string](e, `document.getElementById("transcript").textContent`); !strings.Contains(got, "Let me remember that.") {
		t.Errorf("transcript after Stop = %q, want the text before the call kept", got)
	}
}
