package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestCutQuestionAfterReload: a question (show_options) the coach was
// still writing when its reply ended (here at its length limit; a Stop
// stores it the same way) is never asked: live, the page shows the text
// before it and the note. After a reload the stored call was drawn as an
// inactive question, its "interrupted" result as the user's answer (a
// bubble of the server's words the user never said) and, under it, "The
// coach did not reply to this." The question is left out of the stored
// page as it was of the live one.
func TestCutQuestionAfterReload(t *testing.T) {
	e := newEnv(t, 1280, 800)
	input := `{"prompt":"Pick a time","options":["Morning","Lunch","Evening"]}`
	e.fake.Enqueue(at.Blocks(at.TextBlock("Let me ask.", 5), at.ToolUse("toolu_ask", "show_options", input)).WithStop("max_tokens"))
	e.signIn()
	e.send("When should I run?")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Let me ask.")`)
	e.waitIdle()
	shown := `[...document.querySelectorAll(".msg")].map((m) => (m.classList.contains("user") ? "user:" : "coach:") + m.textContent).join(" | ") + " questions=" + document.querySelectorAll(".interaction").length`
	live := eval[string](e, shown)
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.getElementById("transcript").textContent.includes("Let me ask.")`)
	if got := eval[string](e, shown); got != live {
		t.Errorf("after a reload the page shows\n%s\nwant as it was live\n%s", got, live)
	}
}
