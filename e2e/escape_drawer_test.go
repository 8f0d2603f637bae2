package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestEscapeInDrawerKeepsReply: on a phone, the conversations drawer
// opened while a reply is written, Esc is the drawer's: it closes it and
// gives the focus back to its button. It stopped the reply instead, and
// left the drawer open over the chat.
func TestEscapeInDrawerKeepsReply(t *testing.T) {
	e := newEnv(t, 390, 844)
	e.replyUnderWay()
	e.run(chromedp.Click(chromedp.CSS("#sidebar-open")))
	e.waitJS("the drawer open, the focus in it", `document.body.classList.contains("sidebar-open") && document.getElementById("sidebar").contains(document.activeElement)`)
	e.run(chromedp.KeyEvent("\u001b"))
	e.waitJS("the drawer closed", `!document.body.classList.contains("sidebar-open")`)
	if got := eval[string](e, `document.activeElement.id`); got != "sidebar-open" {
		t.Errorf("focus after Esc in the drawer = %q, want its button (sidebar-open)", got)
	}
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".msg.assistant .md")?.textContent ?? ""`); got != nightPlan {
		t.Errorf("reply = %q, want it whole", got)
	}
	if notes := eval[string](e, `[...document.querySelectorAll(".msg.assistant .msg-note")].map((n) => n.textContent).join("|")`); strings.Contains(notes, "Stopped") {
		t.Errorf("the reply is marked %q: Esc in the drawer stopped it", notes)
	}
}
