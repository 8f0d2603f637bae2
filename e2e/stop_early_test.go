package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopBeforeAnswer: Stop pressed after a new conversation's first
// message went out, before the server's answer came back. The page cut
// the request and said "Not sent", putting the message back in the
// composer; but the server had it stored and its turn running (a turn
// outlives its connection), so the coach went on answering a message the
// page said it never sent, in a conversation the page did not show. The
// page now waits for the answer, which names the conversation, and stops
// the turn there: the message is shown sent, and stopped.
func TestStopBeforeAnswer(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Never said.", 4).StallAfter(1))
	e.signIn()
	answered, release := e.faults.holdAnswerNext("POST", "/v1/chat/stream")
	defer release()
	e.send("Plan my night")
	select {
	case <-answered:
	case <-e.ctx.Done():
		t.Fatal("coachd never answered the chat request")
	}
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	release()
	e.waitIdle()
	if got := eval[string](e, `[...document.querySelectorAll(".msg")].map((m) => m.textContent).join(" | ")`); got != "Plan my night | Stopped" {
		t.Errorf("transcript after Stop = %q, want the message sent, and stopped", got)
	}
	if got := eval[string](e, `document.getElementById("input").value`); got != "" {
		t.Errorf("composer = %q, want empty: the message was sent", got)
	}

	// The server agrees: one conversation, its turn not running.
	res := e.apiDo("GET", "/v1/sessions/"+e.oneSession(), "", nil, http.StatusOK)
	var sess struct {
		RunningTurn *struct{ Turn int64 } `json:"running_turn"`
	}
	err := json.NewDecoder(res.Body).Decode(&sess)
	res.Body.Close()
	if err != nil || sess.RunningTurn != nil {
		t.Errorf("the conversation's turn still runs after Stop (%v)", err)
	}
}
