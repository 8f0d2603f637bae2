package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestMessageRetried: a message refused for a moment (the coach busy) is
// marked "Not sent", put back in the composer with its files left in the
// tray, and Retry offered. Retry sent it, and the reply came, but the
// message stayed marked "Not sent" and the composer and the tray kept it,
// one Enter away from sending it twice. Once Retry's message is taken it
// reads as sent, and the composer and the tray let it go.
func TestMessageRetried(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Got it.", 0))
	e.signIn()
	eval[chromedp.Void](e, dropJS+`("aGVsbG8K", "plan.txt", "text/plain", 0)`)
	e.waitJS("the upload", `document.querySelector("#attach-tray li:not(.uploading)") !== null`)
	e.faults.failNextWith("POST", "/v1/chat/stream", 503, `{"error":{"code":"rate_limit","message":"busy"}}`, "")
	e.send("Read this")
	e.waitVisible(".banner-retry")
	if got := eval[string](e, `document.getElementById("input").value`); got != "Read this" {
		t.Fatalf("composer %q after the refusal, want the message back", got)
	}
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Got it.")`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("transcript").textContent`); strings.Contains(got, "Not sent") {
		t.Errorf("transcript %q: the message sent by Retry is still marked not sent", got)
	}
	if got := eval[string](e, `document.getElementById("input").value`); got != "" {
		t.Errorf("composer %q after Retry sent it, want it empty", got)
	}
	if n := eval[int](e, `document.querySelectorAll("#attach-tray li").length`); n != 0 {
		t.Errorf("%d files left in the tray after Retry sent them", n)
	}
	if got := eval[string](e, `document.activeElement.id || document.activeElement.tagName`); got != "input" {
		t.Errorf("focus on %q after Retry, want the composer", got)
	}
}
