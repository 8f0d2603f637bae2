package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// pressKey presses a key that types nothing (an arrow, Tab) as a keyboard
// does.
func pressKey(key string, code int64) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		for _, typ := range []input.DispatchKeyEventType{input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp} {
			ev := input.DispatchKeyEventParams{Type: typ, Key: key, Code: key, WindowsVirtualKeyCode: code, NativeVirtualKeyCode: code}
			if _, err := cdp.Call(ctx, t, input.DispatchKeyEvent, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestPulseCheckKeyboard: a pulse check's ratings are radio groups to a
// screen reader, but the arrow keys did nothing in them, and every one of
// the five buttons of every row was a stop of Tab. Each row is now one
// stop of Tab, and the arrows move the rating in it, as radio groups do.
func TestPulseCheckKeyboard(t *testing.T) {
	e := newEnv(t, 1280, 900, "--pack", filepath.Join(repoRoot(t), "examples", "sage"))
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("Let's check in.", 0),
			at.ToolUse("toolu_pulse", "show_pulse_check", `{"context":"How did this week feel?","domains":["health","work"]}`)),
		at.Text("Thanks for checking in.", 0),
	)
	e.signIn()
	e.send("Weekly check-in please")
	e.waitVisible(".interaction .rating-row")
	e.waitIdle()
	e.run(chromedp.Evaluate[chromedp.Void](`document.querySelector('.rating[data-domain="health"] .rate').focus()`))
	right, tab := pressKey("ArrowRight", 39), pressKey("Tab", 9)
	e.run(right, right, tab, right, right, right)
	checked := `[...document.querySelectorAll(".rating")].map((r) => r.querySelector('[aria-checked="true"]')?.dataset.value || "").join(",")`
	if got := eval[string](e, checked); got != "3,4" {
		t.Fatalf("ratings checked %q after arrows and Tab, want 3,4", got)
	}
	e.run(tab, tab) // the note, then Send
	if got := eval[string](e, `document.activeElement.textContent`); got != "Send" {
		t.Fatalf("focus on %q after the ratings and the note, want Send", got)
	}
	e.run(pressEnter())
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Thanks for checking in.")`)
	e.waitIdle()
	reqs := e.fake.Requests()
	if trs := reqs[len(reqs)-1].ToolResults(); len(trs) != 1 || !strings.Contains(trs[0].ResultText(), `{"domain":"health","rating":3}`) ||
		!strings.Contains(trs[0].ResultText(), `{"domain":"work","rating":4}`) {
		t.Fatalf("pulse answer sent to the model = %+v", trs)
	}
}
