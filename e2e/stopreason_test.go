package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopReasonShown: a turn that ends early ends its stream with a
// message_end whose stop_reason says why (cut at the length limit, a
// refusal, stopped from another tab or app). The reply must say so: a
// reply cut mid-sentence looked finished, and one stopped elsewhere just
// stopped growing.
func TestStopReasonShown(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(
		at.Text("Here is the first half of a long plan, and then the", 5).WithStop("max_tokens"),
		at.Text("I can't help with that.", 0).WithStop("refusal"),
		at.Text("Counting slowly: one, two, three, four, five, six", 4).Paced(0, 20*time.Millisecond).StallAfter(8),
	)
	e.signIn()
	lastNote := func(e *env) string {
		e.t.Helper()
		return eval[string](e, `[...document.querySelectorAll(".msg.assistant")].pop()?.querySelector(".msg-note")?.textContent ?? ""`)
	}
	t.Run("MaxTokens", func(t *testing.T) {
		e := e.sub(t)
		e.send("Plan my month")
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("and then the")`)
		e.waitIdle()
		if got := lastNote(e); !strings.Contains(got, "cut short") {
			t.Errorf("note under a reply cut at max_tokens = %q, want it to say the reply was cut short", got)
		}
		// The stored reply says it too.
		e.run(chromedp.Reload())
		e.waitJS("the history", `document.getElementById("transcript").textContent.includes("and then the")`)
		if got := lastNote(e); !strings.Contains(got, "cut short") {
			t.Errorf("after a reload the note = %q, want it to say the reply was cut short", got)
		}
	})
	t.Run("Refusal", func(t *testing.T) {
		e := e.sub(t)
		e.send("Something odd")
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("help with that.")`)
		e.waitIdle()
		if got := lastNote(e); !strings.Contains(got, "declined") {
			t.Errorf("note under a refusal = %q, want it to say the coach declined", got)
		}
	})
	t.Run("StoppedElsewhere", func(t *testing.T) {
		e := e.sub(t)
		e.send("Count for me")
		e.waitJS("the partial reply", `document.getElementById("transcript").textContent.includes("Counting")`)
		id := strings.TrimPrefix(eval[string](e, `location.hash`), "#/")
		req, err := http.NewRequest(http.MethodPost, e.url+"/v1/sessions/"+id+"/stop", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusAccepted {
			t.Fatalf("stop: %s", res.Status)
		}
		e.waitIdle()
		if got := lastNote(e); !strings.Contains(got, "Stopped") {
			t.Errorf("note under a reply stopped from elsewhere = %q, want Stopped", got)
		}
	})
}
