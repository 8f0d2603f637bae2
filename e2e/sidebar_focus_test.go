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

// TestPhoneNotesFocus: the notes panel covers the whole screen of a phone,
// and opening it left the focus on the Notes button under it; its close
// button then dropped the focus to the page. Opening it now moves the
// focus into the panel, and closing it gives it back to the Notes button.
func TestPhoneNotesFocus(t *testing.T) {
	e := newEnv(t, 390, 760)
	e.signIn()
	e.run(chromedp.Click(chromedp.CSS("#notes-open")))
	e.waitJS("the panel open", `document.body.classList.contains("notes-open")`)
	if !eval[bool](e, `document.getElementById("notes").contains(document.activeElement)`) {
		t.Errorf("focus on %q with the notes open, want it in the panel", eval[string](e, `document.activeElement.id || document.activeElement.className || document.activeElement.tagName`))
	}
	e.settle()
	e.run(chromedp.Click(chromedp.CSS("#notes-close")))
	e.waitJS("the panel closed", `!document.body.classList.contains("notes-open")`)
	if got := eval[string](e, `document.activeElement.id`); got != "notes-open" {
		t.Errorf("focus on %q after closing the notes, want the Notes button", got)
	}
}
