package e2e

import (
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSecondTabKeepsTypedAnswer: two tabs on a conversation with a
// question open; the user writes in the second tab's question, then
// sends a message from the first tab, which dismisses it. The second
// tab follows that turn, drawing the conversation again: what was
// typed in its question went with it. It now goes to the composer.
func TestSecondTabKeepsTypedAnswer(t *testing.T) {
	e := newEnv(t, 390, 844, "--pack", filepath.Join(repoRoot(t), "examples", "sage"))
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("Let's check in.", 0),
			at.ToolUse("toolu_pulse", "show_pulse_check", `{"context":"How did this week feel?","domains":["health","work"]}`)),
		at.Text("No check-in today, then.", 0),
	)
	e.signIn()
	e.send("Weekly check-in please")
	e.waitVisible(".interaction .pulse-note")
	e.waitIdle()
	b, cancel := e.secondTab("Let's check in.")
	defer cancel()
	b.run(chromedp.SendKeys(chromedp.CSS(".interaction .pulse-note"), "A long week at work"))

	e.send("Skip it")
	b.waitJS("the reply in the second tab", `document.getElementById("transcript").textContent.includes("No check-in today")`)
	b.waitIdle()
	if got := eval[string](b, `document.getElementById("input").value`); got != "A long week at work" {
		t.Errorf("second tab's composer = %q, want what was typed in its question", got)
	}
}
