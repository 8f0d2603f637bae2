package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSecondTabFollowsSentTurn: two tabs on one conversation, the second
// one idle. A message sent in the first tab was answered there only: the
// second tab went on showing the conversation without it, so a message
// sent from it answered a conversation it did not show. It now follows
// the reply as it is written, once, and keeps what its composer holds.
func TestSecondTabFollowsSentTurn(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "Start at the airport, then the stadium at ten, then downtown until two."
	e.fake.Enqueue(at.Text("Hello.", 0), at.Text(reply, 4).Paced(0, 40*time.Millisecond))
	e.signIn()
	e.send("Hi")
	e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("Hello.")`)
	e.waitIdle()
	b, cancel := e.secondTab("Hello.")
	defer cancel()
	b.run(chromedp.SendKeys(chromedp.CSS("#input"), "a draft"))

	e.send("Plan my night")
	b.waitJS("the reply in the second tab", `document.getElementById("transcript").textContent.includes("until two.")`)
	b.waitIdle()
	e.waitIdle()
	if got := eval[[]string](b, `[...document.querySelectorAll(".msg.user .bubble")].map((x) => x.textContent)`); len(got) != 2 || got[1] != "Plan my night" {
		t.Errorf("second tab's user messages = %v, want [Hi, Plan my night]", got)
	}
	if got := eval[[]string](b, `[...document.querySelectorAll(".msg.assistant .md")].map((x) => x.textContent)`); len(got) != 2 || got[1] != reply {
		t.Errorf("second tab's replies = %q, want [Hello. %q]", got, reply)
	}
	if got := eval[string](b, `document.getElementById("input").value`); got != "a draft" {
		t.Errorf("second tab's composer = %q, want its draft kept", got)
	}
}
