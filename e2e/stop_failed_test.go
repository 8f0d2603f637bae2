package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopRefused: Stop pressed while the coach writes, and the stop
// request fails (the database briefly unavailable, a 503). The page
// stopped reading at once and said "Stopped" under the words it had,
// while on the server the turn, never stopped, wrote its whole reply
// and stored it: a reload showed a reply the page had said was
// stopped. The page now says the reply could not be stopped and
// follows the turn on, to the reply as stored; Stop may be pressed
// again.
func TestStopRefused(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text(nightPlan, 8).Paced(0, 150*time.Millisecond))
	e.signIn()
	e.send("Plan my night")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
	e.faults.failNextWith("POST", "/v1/sessions/", 503,
		`{"error":{"code":"unavailable","message":"the database is unavailable for now","retryable":true}}`, "1")
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
	reply := `[...document.querySelectorAll(".msg.assistant")].map((m) => m.textContent).join(" | ")`
	live := eval[string](e, reply)
	if !strings.Contains(live, "rest on Sunday.") || strings.Contains(live, "Stopped") {
		t.Errorf("reply after a refused Stop = %q, want the whole reply, as the server wrote it, not marked stopped", live)
	}
	if n := e.faults.count("POST", "/v1/sessions"); n != 1 {
		t.Errorf("%d stop requests, want 1", n)
	}
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.getElementById("transcript").textContent.includes("airport")`)
	e.waitIdle()
	if got := eval[string](e, reply); got != live {
		t.Errorf("after a reload = %q, want %q as it was live", got, live)
	}
}
