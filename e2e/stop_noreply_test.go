package e2e

import (
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopBeforeReplyAfterReload: Stop pressed before the coach wrote a
// word ends a turn that stored no reply, so nothing carries its stop
// reason (a reply keeps metadata.turn_stop_reason). Live the page said
// "Stopped" under the message; after a reload the message stood alone,
// as if the coach were still to answer it or had ignored it. The history
// now says the coach did not reply, for a message followed by the next
// one as for the last, and not for a message whose turn is still
// running.
func TestStopBeforeReplyAfterReload(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Never said.", 4).StallAfter(1))
	e.signIn()
	e.send("Plan my night")
	e.waitVisible(".msg.assistant .typing")
	e.waitJS("the turn accepted", `location.hash.startsWith("#/sess_")`)
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
	notes := `[...document.querySelectorAll(".msg")].map((m) => m.classList.contains("user") ? "user:" + m.textContent : "coach:" + [...m.querySelectorAll(".md, .msg-note")].map((n) => n.textContent).join("+")).join(" | ")`
	if got, want := eval[string](e, notes), "user:Plan my night | coach:Stopped"; got != want {
		t.Fatalf("live = %q, want %q", got, want)
	}
	noReply := "coach:The coach did not reply to this."
	e.run(chromedp.Reload())
	e.waitJS("the stored message", `document.getElementById("history").textContent.includes("Plan my night")`)
	if got, want := eval[string](e, notes), "user:Plan my night | "+noReply; got != want {
		t.Errorf("after a reload = %q, want %q", got, want)
	}

	// The next message is answered; the first still says it was not.
	e.fake.Enqueue(at.Text("Airport first.", 0))
	e.send("Where do I start?")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Airport first.")`)
	e.waitIdle()
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.getElementById("history").textContent.includes("Airport first.")`)
	if got, want := eval[string](e, notes), "user:Plan my night | "+noReply+" | user:Where do I start? | coach:Airport first."; got != want {
		t.Errorf("after the next turn = %q, want %q", got, want)
	}
}

// TestNoReplyAtPageBoundary: a message that got no reply, the last of a
// page of older messages, says so when that page is drawn above the one
// after it (which starts with the user's next message); the page it
// opened on draws no note for a message whose reply is there.
func TestNoReplyAtPageBoundary(t *testing.T) {
	e := newEnv(t, 1280, 800, "--rate-limit", "off")
	e.signIn()
	sessID, record := e.recordedSession("Long one")
	// 101 messages: the last page (100) starts at "Again".
	record("user", "Hello")
	record("user", "Again")
	record("assistant", "Answer 0")
	for i := 1; i <= 49; i++ {
		record("user", fmt.Sprintf("Question %d", i))
		record("assistant", fmt.Sprintf("Answer %d", i))
	}
	e.run(chromedp.Navigate(e.url + "/#/" + sessID))
	e.waitJS("the last message", `document.getElementById("transcript").textContent.includes("Answer 49")`)
	e.waitIdle()
	notes := `document.querySelectorAll("#transcript .msg-note").length`
	if n := eval[int](e, notes); n != 0 {
		t.Errorf("%d notes on the last page, want none: every message there has its reply", n)
	}
	e.run(chromedp.Click(chromedp.CSS("#earlier-more")))
	e.waitJS("the first page", `document.getElementById("transcript").textContent.includes("Hello")`)
	head := `[...document.querySelectorAll(".msg")].slice(0, 4).map((m) => (m.classList.contains("user") ? "user:" : "coach:") + m.textContent).join(" | ")`
	if got, want := eval[string](e, head), "user:Hello | coach:The coach did not reply to this. | user:Again | coach:Answer 0"; got != want {
		t.Errorf("conversation's start = %q, want %q", got, want)
	}
	if n := eval[int](e, notes); n != 1 {
		t.Errorf("%d notes in all, want 1", n)
	}
}
