package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestLeaveConversationMidReply: opening a new conversation while the
// coach is still replying leaves that reply to finish, as a reload does
// (the coachd dialect's turns outlive their connection); going back
// follows it and shows it whole. The page stopped the turn on the server
// instead, and the reply was stored cut short.
func TestLeaveConversationMidReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "Start at the airport, then the stadium at ten, then downtown until two, and rest on Sunday."
	e.fake.Enqueue(at.Text(reply, 4).Paced(0, 40*time.Millisecond))
	e.signIn()
	e.send("Plan my night")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
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
