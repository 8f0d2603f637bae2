package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBannerDismissKeepsFocus: a message refused for want of budget (402)
// shows a banner; a keyboard user who reads it and dismisses it with its
// × lost the focus to the top of the page (the button went with the
// banner), so the next keystrokes went nowhere. The focus now goes back
// to the composer, which still holds the refused message.
func TestBannerDismissKeepsFocus(t *testing.T) {
	e := newEnv(t, 390, 844)
	e.signIn()
	e.faults.failNextWith("POST", "/v1/chat/stream", 402, `{"error":{"code":"budget_exhausted","message":"no budget left"}}`, "")
	e.send("One more")
	e.waitVisible(`.banner[data-type=budget_exhausted] .banner-close`)
	e.waitIdle()
	eval[chromedp.Void](e, `document.querySelector(".banner-close").focus()`)
	e.run(pressEnter())
	e.waitJS("the banner gone", `document.querySelector(".banner") === null`)
	if got := eval[string](e, `document.activeElement.id || document.activeElement.tagName`); got != "input" {
		t.Errorf("focus after dismissing the banner = %q, want the composer (input)", got)
	}
	if got := eval[string](e, `document.getElementById("input").value`); got != "One more" {
		t.Errorf("composer = %q, want the refused message kept", got)
	}
}
