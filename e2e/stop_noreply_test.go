package e2e

import (
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
