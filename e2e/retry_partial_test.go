package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestRetryAfterPartialReply: a message taken, its reply cut short by
// the AI service failing mid-way; Retry sends the message again for a
// new reply. It must not carry the first request's Idempotency-Key: the
// server answered that request, and would answer it again with the same
// failed turn instead of a new one.
func TestRetryAfterPartialReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("First reply.", 0))
	e.signIn()
	e.send("Hello")
	e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("First reply.")`)
	e.waitIdle()
	e.fake.Enqueue(at.Text("Half of a reply that breaks off", 4).ErrorAfter(4, "api_error", "upstream broke"))
	e.send("Plan my week")
	e.waitVisible(".banner-retry")
	e.waitIdle()
	e.fake.Enqueue(at.Text("Whole reply.", 0))
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("a new reply", `document.getElementById("transcript").textContent.includes("Whole reply.")`)
	e.waitIdle()
	if got := len(e.fake.Requests()); got != 3 {
		t.Errorf("the model was called %d times, want 3", got)
	}
}
