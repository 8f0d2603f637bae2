package e2e

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestLiveQuestionClosesAtExpiry: a question asked in the reply being
// streamed got no expiry (the interaction event had none), so left open
// on screen past it, it closed only when pressed: a 409, then the
// conversation drawn again. The event carries the pending record's
// expires_at now, and the question closes at that time.
//
// The page's timers longer than an hour are kept for the test to fire
// (the expiry is a day away): what it checks is that the live question
// set one for its expiry, and that it closes the question when it fires.
func TestLiveQuestionClosesAtExpiry(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.run(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
			const set = window.setTimeout;
			window.__long = [];
			window.setTimeout = function (f, ms, ...args) {
				if (ms > 3600e3) { window.__long.push({ ms, f }); return 0; }
				return set.call(window, f, ms, ...args);
			};
		})()`})
		return err
	}))
	e.askTime()
	if eval[bool](e, `document.querySelector("#live .interaction") === null`) {
		t.Fatal("the question is not the live reply's")
	}
	if eval[bool](e, `document.querySelector(".interaction .pill").disabled`) {
		t.Fatal("the question is closed before its expiry")
	}
	// The fake's clock and the page's are this machine's: the expiry is a
	// day (the default TTL) after the question, less the time since.
	if !eval[bool](e, `window.__long.some((x) => x.ms > 23 * 3600e3 && x.ms <= 24 * 3600e3)`) {
		t.Fatalf("no timer closes the question at its expiry; long timers: %v", eval[[]float64](e, `window.__long.map((x) => x.ms)`))
	}
	e.run(chromedp.Evaluate[chromedp.Void](`window.__long.forEach((x) => x.f())`))
	e.waitJS("the question closed", `document.querySelector(".interaction .interaction-note") !== null`)
	if !eval[bool](e, `[...document.querySelectorAll(".interaction .pill")].every(p => p.disabled)`) {
		t.Error("the expired question's pills are enabled")
	}
	if got := eval[string](e, `document.querySelector(".interaction .interaction-note").textContent`); got != "This question has expired. Send a message to go on." {
		t.Errorf("note %q, want the expiry's", got)
	}
}

// TestQuestionExpiresWhileTyping: a question that expired while the user
// was typing in it (a pulse check's note) disabled the field under their
// fingers: the focus fell to the page's body, the words stayed in a field
// that takes no more input, and the note said to send a message instead.
// The focus now goes to the composer, with the words typed in it.
func TestQuestionExpiresWhileTyping(t *testing.T) {
	e := newEnv(t, 1280, 800, "--pack", filepath.Join(repoRoot(t), "examples", "sage"))
	e.run(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
			const set = window.setTimeout;
			window.__long = [];
			window.setTimeout = function (f, ms, ...args) {
				if (ms > 3600e3) { window.__long.push({ ms, f }); return 0; }
				return set.call(window, f, ms, ...args);
			};
		})()`})
		return err
	}))
	e.fake.Enqueue(at.Blocks(at.TextBlock("Quick check-in.", 0),
		at.ToolUse("toolu_pulse", "show_pulse_check", `{"context":"How did this week feel?","domains":["health"]}`)))
	e.signIn()
	e.send("Check in with me")
	e.waitVisible(".interaction .pulse-note")
	e.waitIdle()
	e.run(chromedp.Click(chromedp.CSS(".interaction .pulse-note")), chromedp.SendKeys(chromedp.CSS(".interaction .pulse-note"), "tired legs"))
	e.run(chromedp.Evaluate[chromedp.Void](`window.__long.forEach((x) => x.f())`))
	e.waitJS("the question closed", `document.querySelector(".interaction .interaction-note") !== null`)
	if got := eval[string](e, `document.activeElement.id || document.activeElement.tagName`); got != "input" {
		t.Errorf("focus on %q after the question expired, want the composer", got)
	}
	if got := eval[string](e, `document.getElementById("input").value`); got != "tired legs" {
		t.Errorf("composer %q, want the words typed in the question", got)
	}
}
