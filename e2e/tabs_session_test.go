package e2e

import (
	"testing"
	"time"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSecondTabFollowsRunningTurn: two tabs on one conversation. While
// the first tab's turn runs, the second tab's message is refused
// (turn_in_progress); the second tab then showed a banner and nothing
// else, and went on without the first tab's turn even after it ended,
// so its next message was answered in a conversation it did not show.
// It now draws the conversation again and follows the running reply to
// its end, keeping the unsent message in the composer.
func TestSecondTabFollowsRunningTurn(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "Start at the airport, then the stadium at ten, then downtown until two."
	e.fake.Enqueue(at.Text("Hello.", 0), at.Text(reply, 4).Paced(0, 60*time.Millisecond))
	e.signIn()
	e.send("Hi")
	e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("Hello.")`)
	e.waitIdle()
	b, cancel := e.secondTab("Hello.")
	defer cancel()

	e.send("Plan my night")
	e.waitJS("the first tab's reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
	b.send("Me too")
	b.waitJS("the running reply in the second tab", `document.getElementById("transcript").textContent.includes("until two.")`)
	b.waitIdle()
	e.waitIdle()
	if got := eval[string](b, `document.getElementById("input").value`); got != "Me too" {
		t.Errorf("second tab's composer = %q, want the unsent message kept", got)
	}
	if got := eval[[]string](b, `[...document.querySelectorAll(".msg.user .bubble")].map((x) => x.textContent)`); len(got) != 2 || got[1] != "Plan my night" {
		t.Errorf("second tab's user messages = %v, want [Hi, Plan my night]", got)
	}
}
