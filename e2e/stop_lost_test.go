package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopThenAnswerLost: Stop pressed while a message's request
// awaited its answer, and that answer was then lost on the network
// (coachd had stored the message and begun its turn). The page said
// "Not sent" and put the message back in the composer, while on the
// server the turn the user had asked to stop ran on, unseen: nothing
// stopped it. The page now asks again for the turn (the same request,
// with its Idempotency-Key, is answered with the turn it began), stops
// it there, and shows the message sent and stopped, as a reload does.
// It says it is reconnecting meanwhile, as for a reply's stream lost.
func TestStopThenAnswerLost(t *testing.T) {
	for _, c := range []struct {
		name  string
		first bool // the conversation's first message
	}{{"NewConversation", true}, {"InConversation", false}} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, 1280, 800)
			e.signIn()
			want := "Plan my night | Stopped"
			if !c.first {
				e.fake.Enqueue(at.Text("Hello there.", 0))
				e.send("Hello")
				e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("Hello there.")`)
				e.waitIdle()
				want = "Hello | Hello there. | " + want
			}
			e.fake.Enqueue(at.Text("Never said.", 4).StallAfter(1))
			answered, cut := e.faults.holdAnswerThenCutNext("POST", "/v1/chat/stream")
			defer cut()
			e.send("Plan my night")
			select {
			case <-answered:
			case <-e.ctx.Done():
				t.Fatal("coachd never answered the chat request")
			}
			e.run(chromedp.Click(chromedp.CSS("#stop")))
			// The answer is lost, and so are the browser's own resends of
			// the request, until the page says it is reconnecting (or
			// gives up).
			_, stopCutting := e.faults.cutAnswers("POST", "/v1/chat/stream")
			defer stopCutting()
			cut()
			e.waitJS("the page to reconnect, or give up", `document.querySelector(".reconnecting") !== null || document.body.dataset.phase === "idle"`)
			stopCutting()
			e.waitIdle()
			messages := `[...document.querySelectorAll(".msg")].map((m) => m.textContent).join(" | ")`
			if got := eval[string](e, messages); got != want {
				t.Errorf("transcript after Stop = %q, want %q: the message sent, and stopped", got, want)
			}
			if got := eval[string](e, `document.getElementById("input").value`); got != "" {
				t.Errorf("composer = %q, want empty: the message was sent", got)
			}

			// The server agrees: the turn is not running, the message is
			// stored once, and the coach was asked once for it.
			sessID := e.oneSession()
			res := e.apiDo("GET", "/v1/sessions/"+sessID, "", nil, http.StatusOK)
			var sess struct {
				RunningTurn *struct{ Turn int64 } `json:"running_turn"`
			}
			err := json.NewDecoder(res.Body).Decode(&sess)
			res.Body.Close()
			if err != nil || sess.RunningTurn != nil {
				t.Errorf("the conversation's turn still runs after Stop (%v)", err)
			}
			res = e.apiDo("GET", "/v1/sessions/"+sessID+"/messages", "", nil, http.StatusOK)
			var page struct {
				Messages []struct{ Role, Content string }
			}
			err = json.NewDecoder(res.Body).Decode(&page)
			res.Body.Close()
			n := 0
			for _, m := range page.Messages {
				if m.Role == "user" && m.Content == "Plan my night" {
					n++
				}
			}
			if err != nil || n != 1 {
				t.Errorf("the message is stored %d times (%+v, %v), want once", n, page.Messages, err)
			}
			calls := 1
			if !c.first {
				calls = 2
			}
			if got := len(e.fake.Requests()); got != calls {
				t.Errorf("the model was called %d times, want %d", got, calls)
			}

			// A reload shows the same.
			e.run(chromedp.Reload())
			e.waitJS("the stored message", `document.getElementById("history").textContent.includes("Plan my night")`)
			e.waitIdle()
			if got, reload := eval[string](e, messages), "The coach did not reply to this."; got != want[:len(want)-len("Stopped")]+reload {
				t.Errorf("after a reload = %q, want %q", got, want[:len(want)-len("Stopped")]+reload)
			}
		})
	}
}
