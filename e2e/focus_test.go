package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestFocusAfterSend: whatever sent the message (Enter, the Send button,
// a suggestion, an answer's button) or stopped the reply (the Stop button), the keyboard's
// focus ends in the composer. The button pressed hides with the phase
// change, and a hidden button's focus goes nowhere: the next keystrokes
// were lost until the user clicked the composer again.
func TestFocusAfterSend(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(
		// Paced: the page draws the reply in parts, with Send hidden.
		at.Text("A suggestion taken.", 4).Paced(0, 20*time.Millisecond),
		at.Text("A click answered.", 4).Paced(0, 20*time.Millisecond),
		at.Blocks(at.TextBlock("Which?", 0), at.ToolUse("toolu_pick", "show_options", `{"prompt":"Pick one","options":["Morning","Evening"]}`)),
		at.Text("Morning suits you.", 4).Paced(0, 20*time.Millisecond),
		at.Text("This one is stopped before it ends", 4).Paced(0, 20*time.Millisecond).StallAfter(6),
	)
	e.signIn()
	focused := func(e *env, when string) {
		e.t.Helper()
		if got := eval[string](e, `document.activeElement?.id || document.activeElement?.tagName || ""`); got != "input" {
			e.t.Errorf("%s: focus on %q, want the composer (#input)", when, got)
		}
	}
	t.Run("Suggestion", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Click(chromedp.CSS(".suggestion")))
		e.waitJS("the reply in part", `document.getElementById("transcript").textContent.includes("A sug")`)
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("A suggestion taken.")`)
		e.waitIdle()
		focused(e, "after a suggestion's reply")
	})
	t.Run("SendButton", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.SendKeys(chromedp.CSS("#input"), "Clicked"), chromedp.Click(chromedp.CSS("#send")))
		e.waitJS("the reply in part", `document.getElementById("transcript").textContent.includes("A cli")`)
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("A click answered.")`)
		e.waitIdle()
		focused(e, "after clicking Send")
	})
	t.Run("Answer", func(t *testing.T) {
		e := e.sub(t)
		e.send("Ask me")
		e.waitVisible(".interaction .pill")
		e.waitIdle()
		e.run(chromedp.Click(chromedp.CSS(".interaction .pill")))
		e.waitJS("the reply in part", `document.getElementById("transcript").textContent.includes("Morning su")`)
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Morning suits you.")`)
		e.waitIdle()
		focused(e, "after answering with a click")
	})
	t.Run("StopButton", func(t *testing.T) {
		e := e.sub(t)
		e.send("Go on")
		e.waitJS("the partial reply", `document.getElementById("transcript").textContent.includes("This one")`)
		e.run(chromedp.Click(chromedp.CSS("#stop")))
		e.waitIdle()
		focused(e, "after clicking Stop")
	})
}
