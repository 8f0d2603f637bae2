package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestQuestionFitsPhone: a question whose option holds a long unbroken
// word (a file name, an identifier, a URL) was as wide as that word: on a
// phone the question ran off the screen, its prompt and options cut at
// the right edge and the last option out of sight. The question now keeps
// to the screen's width and its words wrap.
func TestQuestionFitsPhone(t *testing.T) {
	e := newEnv(t, 390, 844)
	e.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	e.fake.Enqueue(at.Blocks(at.TextBlock("Which file?", 0),
		at.ToolUse("toolu_f", "show_options", `{"prompt":"Which of these should I read first: weekly_training_plan_final_v3_reviewed.pdf?","options":["weekly_training_plan_final_v3_reviewed_by_coach.pdf","Neither"]}`)))
	e.signIn()
	e.send("Read my plan")
	e.waitVisible(".interaction .pill")
	e.waitIdle()
	e.noOverflow("phone question")
	if n := eval[int](e, `[...document.querySelectorAll(".interaction .pill")].filter((p) => p.getBoundingClientRect().right > window.innerWidth).length`); n != 0 {
		t.Errorf("%d options run off the screen", n)
	}
}
