package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// askTime signs in and has the coach ask a question, drawn with its pills.
func (e *env) askTime() {
	e.t.Helper()
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("When do you train best?", 0),
			at.ToolUse("toolu_when", "show_options", `{"prompt":"Pick a time","options":["Morning","Lunch","Evening"]}`)),
		at.Text("Morning it is.", 0),
	)
	e.signIn()
	e.send("Help me pick a training time")
	e.waitVisible(".interaction .pill")
	e.waitIdle()
}

// TestQuestionAnsweredInOtherTab: a question answered in another tab
// still showed live pills in this one, and pressing one showed the
// server's raw 409 ("the session has no pending interaction to answer")
// and gave the pills back. The page now draws the conversation again
// from the store: the question answered, with the other tab's answer and
// reply, and no banner.
func TestQuestionAnsweredInOtherTab(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.askTime()
	b, cancel := e.secondTab("Pick a time")
	defer cancel()
	b.waitVisible(".interaction .pill")
	b.run(chromedp.Click(chromedp.CSS(`.interaction .pill[data-value="Morning"]`)))
	b.waitJS("the reply in the second tab", `document.getElementById("transcript").textContent.includes("Morning it is.")`)
	b.waitIdle()

	e.run(chromedp.Click(chromedp.CSS(`.interaction .pill[data-value="Evening"]`)))
	e.waitJS("the other tab's reply drawn", `document.getElementById("transcript").textContent.includes("Morning it is.")`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q, want none", got)
	}
	if !eval[bool](e, `[...document.querySelectorAll(".interaction .pill")].every(p => p.disabled)`) {
		t.Error("the answered question's pills are still enabled")
	}
	if got := eval[string](e, `document.querySelector(".pill.chosen")?.textContent || ""`); got != "Morning" {
		t.Errorf("chosen pill %q, want the other tab's Morning", got)
	}
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.user.answer .bubble")].map(b => b.textContent)`); len(got) != 1 || got[0] != "Morning" {
		t.Errorf("answers shown %v, want [Morning]", got)
	}
}

// TestQuestionExpired: a question past its expiry (24 hours) was drawn
// with live pills, which the server refuses with a 409. It is now drawn
// expired: its pills disabled, and a note saying to send a message.
func TestQuestionExpired(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.askTime()
	// A day and an hour later, by the page's clock.
	later := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument,
			page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => { const now = Date.now; Date.now = () => now() + 25 * 3600e3; })()`})
		return err
	})
	e.run(later, chromedp.Reload())
	e.waitJS("the question drawn", `document.querySelector(".interaction .pill") !== null && document.body.dataset.phase === "idle"`)
	if !eval[bool](e, `[...document.querySelectorAll(".interaction .pill")].every(p => p.disabled)`) {
		t.Error("the expired question's pills are enabled")
	}
	if got := eval[string](e, `document.querySelector(".interaction .interaction-note")?.textContent || ""`); got == "" {
		t.Error("no note says the question expired")
	}
}
