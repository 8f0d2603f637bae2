package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestAttachRemoveKeepsFocus: a file's × removed it with the focus on
// it, and the focus fell to the page's body: a keyboard user removing two
// files had to find the tray again, and after the last one the composer.
// The focus now goes to the next file's ×, or the composer after the last.
func TestAttachRemoveKeepsFocus(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.signIn()
	for _, name := range []string{"a.txt", "b.txt"} {
		e.dropFile("hello\n", name, "text/plain")
	}
	e.waitJS("both uploads", `document.querySelectorAll("#attach-tray li:not(.uploading)").length === 2`)
	focused := `document.activeElement.id || document.activeElement.getAttribute("aria-label") || document.activeElement.tagName`
	eval[chromedp.Void](e, `document.querySelector("#attach-tray .attach-remove").focus()`)
	e.run(pressEnter())
	e.waitJS("a file removed", `document.querySelectorAll("#attach-tray li").length === 1`)
	if got := eval[string](e, focused); got != "Remove b.txt" {
		t.Errorf("focus on %q after removing a file, want the next file's ×", got)
	}
	e.run(pressEnter())
	e.waitJS("the tray empty", `document.querySelectorAll("#attach-tray li").length === 0`)
	if got := eval[string](e, focused); got != "input" {
		t.Errorf("focus on %q after removing the last file, want the composer", got)
	}
}
