package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPhoneMenuFocus: on a phone the conversation list is a drawer over
// the chat. Opening it left the keyboard's focus on the menu button under
// the scrim (a screen reader said nothing had changed, and Tab went on
// into the covered chat), and the button never said whether the drawer
// was open. Opening it now moves the focus into it and marks the button
// expanded; Esc closes it and gives the focus back to the button.
func TestPhoneMenuFocus(t *testing.T) {
	e := newEnv(t, 390, 760)
	e.signIn()
	e.run(chromedp.Click(chromedp.CSS("#sidebar-open")))
	e.waitJS("the drawer open", `document.body.classList.contains("sidebar-open")`)
	if !eval[bool](e, `document.getElementById("sidebar").contains(document.activeElement)`) {
		t.Errorf("focus on %q with the drawer open, want it in the drawer", eval[string](e, `document.activeElement.id || document.activeElement.tagName`))
	}
	if got := eval[string](e, `document.getElementById("sidebar-open").getAttribute("aria-expanded") || ""`); got != "true" {
		t.Errorf("menu button aria-expanded = %q with the drawer open, want true", got)
	}
	e.run(chromedp.KeyEvent("\u001b"))
	e.waitJS("the drawer closed", `!document.body.classList.contains("sidebar-open")`)
	if got := eval[string](e, `document.activeElement.id`); got != "sidebar-open" {
		t.Errorf("focus on %q after Esc closed the drawer, want the menu button", got)
	}
	if got := eval[string](e, `document.getElementById("sidebar-open").getAttribute("aria-expanded") || ""`); got != "false" {
		t.Errorf("menu button aria-expanded = %q with the drawer closed, want false", got)
	}
}
