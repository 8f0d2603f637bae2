package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAnswerRetried: an answer the server refused for a moment (the coach
// busy) offered Retry, which sent the answer and drew the reply, but not
// the answer: the question stayed open, no option chosen and every one
// still live (pressing one got a refusal), the user's answer was missing
// from the conversation, and the focus, on the Retry that went with the
// banner, fell to the page's body. Retry now sends it as pressing the
// option does.
func TestAnswerRetried(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.askTime()
	e.faults.failNextWith("POST", "/v1/chat/stream", 503, `{"error":{"code":"rate_limit","message":"busy"}}`, "")
	e.run(chromedp.Click(chromedp.CSS(`.interaction .pill[data-value="Lunch"]`)))
	e.waitVisible(".banner-retry")
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Morning it is.")`)
	e.waitIdle()
	if !eval[bool](e, `[...document.querySelectorAll(".interaction .pill")].every(p => p.disabled)`) {
		t.Error("the answered question's options are still live")
	}
	if got := eval[string](e, `document.querySelector(".pill.chosen")?.textContent || ""`); got != "Lunch" {
		t.Errorf("chosen option %q, want Lunch", got)
	}
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.user.answer .bubble")].map(b => b.textContent)`); len(got) != 1 || got[0] != "Lunch" {
		t.Errorf("answers shown %v, want [Lunch]", got)
	}
	if got := eval[string](e, `document.activeElement.id || document.activeElement.tagName`); got != "input" {
		t.Errorf("focus on %q after Retry, want the composer", got)
	}
}
