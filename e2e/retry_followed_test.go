package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestRetryFollowedTurnFailed: a page reloaded mid-reply follows the
// turn again; the AI service then fails mid-reply. The banner offered
// Retry, which followed the same stream again from where the reload
// had picked it up: the same words and the same error came back, and
// no new reply ever could. Retry now sends the turn's message again,
// as it does on the page that sent it: a new reply, the message stored
// once.
func TestRetryFollowedTurnFailed(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Start at the airport, then the stadium at ten, then downtown until two, and rest.", 4).
		Paced(0, 150*time.Millisecond).ErrorAfter(20, "api_error", "upstream broke"))
	e.signIn()
	e.send("Plan my night")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
	e.run(chromedp.Reload())
	e.waitJS("the turn followed again", `document.body.dataset.phase !== "idle"`)
	e.waitVisible(".banner-retry")
	e.waitIdle()
	e.fake.Enqueue(at.Text("Whole reply.", 0))
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("a new reply, or an error", `document.getElementById("transcript").textContent.includes("Whole reply.") || document.querySelector(".banner-retry") !== null`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("transcript").textContent`); !strings.Contains(got, "Whole reply.") {
		t.Fatalf("transcript after Retry = %q, want a new reply (banner %q)", got, eval[string](e, `document.getElementById("banner-host").textContent`))
	}
	if got := len(e.fake.Requests()); got != 2 {
		t.Errorf("the model was called %d times, want 2", got)
	}
	res := e.apiDo("GET", "/v1/sessions/"+e.oneSession()+"/messages", "", nil, http.StatusOK)
	var page struct {
		Messages []struct{ Role, Content string }
	}
	err := json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	n := 0
	for _, m := range page.Messages {
		if m.Role == "user" {
			n++
		}
	}
	if err != nil || n != 1 {
		t.Errorf("stored user messages = %d (%+v, %v), want 1", n, page.Messages, err)
	}
}
