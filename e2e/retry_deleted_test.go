package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestRetryInDeletedConversation: Retry pressed for a message refused a
// moment (the coach busy) after its conversation was deleted elsewhere
// (another tab, the API) showed the server's "Not found" (`session
// "sess_…": not found`) and stayed on the deleted conversation, where a
// message sent from the composer already says it was deleted and opens a
// new conversation. Retry now does the same, the message kept.
func TestRetryInDeletedConversation(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("First reply.", 0))
	e.signIn()
	e.send("Hello")
	e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("First reply.")`)
	e.waitIdle()
	e.faults.failNextWith("POST", "/v1/chat/stream", 503, `{"error":{"code":"rate_limit","message":"busy"}}`, "")
	e.send("Are you there?")
	e.waitVisible(".banner-retry")
	e.deleteSession(strings.TrimPrefix(eval[string](e, `location.hash`), "#/"))

	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("the deletion noticed", `document.getElementById("banner-host").textContent.includes("deleted")`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); strings.Contains(got, "sess_") {
		t.Errorf("banner %q quotes the server's message", got)
	}
	if got := eval[string](e, `location.hash`); got != "" {
		t.Errorf("hash %q, want a new conversation", got)
	}
	if got := eval[string](e, `document.getElementById("input").value`); got != "Are you there?" {
		t.Errorf("composer %q, want the message kept", got)
	}
}
