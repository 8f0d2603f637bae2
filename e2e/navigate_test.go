package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestLeaveConversationMidReply: opening a new conversation while the
// coach is still replying leaves that reply to finish, as a reload does
// (the coachd dialect's turns outlive their connection); going back
// follows it and shows it whole. The page stopped the turn on the server
// instead, and the reply was stored cut short.
func TestLeaveConversationMidReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := nightPlan
	e.replyUnderWay()
	hash := eval[string](e, `location.hash`)
	e.run(chromedp.Click(chromedp.CSS("#new-chat")))
	e.waitVisible("#welcome")
	e.waitIdle()
	e.run(chromedp.Navigate(e.url + "/" + hash))
	e.waitJS("the whole reply", `document.getElementById("transcript").textContent.includes("rest on Sunday.")`)
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".msg.assistant .md")?.textContent ?? ""`); got != reply {
		t.Errorf("reply = %q, want %q", got, reply)
	}
	if notes := eval[string](e, `[...document.querySelectorAll(".msg.assistant .msg-note")].map((n) => n.textContent).join("|")`); strings.Contains(notes, "Stopped") {
		t.Errorf("the reply is marked %q: leaving the conversation stopped it", notes)
	}
}
