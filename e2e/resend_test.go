package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestResendAfterRateLimit: a message refused because the user sent too
// many (429) is marked "Not sent" and waits in the composer; the banner
// says when to send again. Sent again from the composer, it showed twice:
// the "Not sent" copy stayed above the one sent.
func TestResendAfterRateLimit(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Here now.", 0))
	e.signIn()
	e.faults.failNextWith("POST", "/v1/chat/stream", 429, `{"error":{"code":"rate_limit_exceeded","message":"too many messages"}}`, "1")
	e.send("Hello again")
	e.waitVisible(`.banner[data-type=rate_limit_exceeded]`)
	e.waitIdle()
	e.waitJS("the banner saying it may be sent again", `document.querySelector(".banner").textContent.includes("send again now")`)
	e.run(chromedp.Focus(chromedp.CSS("#input")), pressEnter())
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Here now.")`)
	e.waitIdle()
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.user")].map((m) => m.textContent)`); len(got) != 1 || got[0] != "Hello again" {
		t.Errorf("user messages on screen = %q, want the one sent, once", got)
	}
}
