package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
)

// streamError is the code of a coachd stream's error event, "" when none.
func streamError(t *testing.T, evs []client.Event) string {
	t.Helper()
	for _, ev := range evs {
		if ev.Name == "error" {
			var e struct{ Type, Code string }
			mustUnmarshal(t, ev.Data, &e)
			if e.Code != "" {
				return e.Code
			}
			return e.Type
		}
	}
	return ""
}

// TestKeyedResendAfterRetryableFailure: a keyed message whose turn failed
// with a retryable error (the model busy, 529) and said nothing is sent
// again with its key, as the retry advice says: it runs once more (the
// message stored once, in the first request's session) and answers the
// new turn, which the key then replays. Before, every resend answered the
// first failure again, for as long as the log kept it. A non-retryable
// failure (the model refusing the request, 400) is still replayed.
func TestKeyedResendAfterRetryableFailure(t *testing.T) {
	ctx := context.Background()
	const body = `{"message":"ok"}`
	// Each case has its own server: a failed one leaves no reply queued.
	each := func(t *testing.T, fn func(t *testing.T, e *chatEnv, asked func() int)) {
		forEachBackend(t, func(t *testing.T, dsn string) {
			e := mustChatEnvDepsOn(t, dsn, func(*server.Deps) {}, nil)
			fn(t, e, func() int { return len(e.fake.Requests()) })
		})
	}

	t.Run("JSON", func(t *testing.T) {
		each(t, func(t *testing.T, e *chatEnv, asked func() int) {
			before := asked()
			e.fake.Enqueue(anthropictest.Status(529, nil, ""), anthropictest.Text("Back now.", 6))
			r, err := postChat(ctx, t, e.url, e.alice.key, "retry-json", body)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != http.StatusServiceUnavailable || r.errorCode() != coachd.EUPSTREAMBUSY {
				t.Fatalf("first: %d %s, want 503 %s", r.status, r.body, coachd.EUPSTREAMBUSY)
			}
			again, out := mustPostChat(t, e.url, e.alice.key, "retry-json", body)
			if out["text"] != "Back now." || again.header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("resent after the failure: %s (replayed %q), want a new turn", again.body, again.header.Get("Idempotent-Replayed"))
			}
			sid, _ := out["session_id"].(string)
			if n := userMessages(t, e, e.alice.ID, sid, "ok"); n != 1 {
				t.Errorf("the message is stored %d times, want 1", n)
			}
			third, out3 := mustPostChat(t, e.url, e.alice.key, "retry-json", body)
			if out3["text"] != "Back now." || third.header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("resent after the success: %s, want it replayed", third.body)
			}
			if n := asked() - before; n != 2 {
				t.Errorf("the model was asked %d times, want 2", n)
			}
		})
	})

	t.Run("Stream", func(t *testing.T) {
		each(t, func(t *testing.T, e *chatEnv, asked func() int) {
			before := asked()
			e.fake.Enqueue(anthropictest.Status(529, nil, ""), anthropictest.Text("Streamed back.", 6))
			first := postKeyed(ctx, t, e.url, e.alice.key, "retry-stream", "", body).until(t, "")
			if got := streamError(t, first); got != "rate_limit" && got != coachd.EUPSTREAMBUSY {
				t.Fatalf("first: error %q in %v, want the model busy", got, first)
			}
			sid := sessionOf(t, first)
			s := postKeyed(ctx, t, e.url, e.alice.key, "retry-stream", "", body)
			evs := s.until(t, "")
			if got := replyText(t, evs); got != "Streamed back." || s.resp.Header.Get("Idempotent-Replayed") != "" {
				t.Fatalf("resent after the failure: %q (replayed %q), want a new turn", got, s.resp.Header.Get("Idempotent-Replayed"))
			}
			if got := sessionOf(t, evs); got != sid {
				t.Errorf("the new attempt ran in session %s, want the first request's %s", got, sid)
			}
			if n := userMessages(t, e, e.alice.ID, sid, "ok"); n != 1 {
				t.Errorf("the message is stored %d times, want 1", n)
			}
			s = postKeyed(ctx, t, e.url, e.alice.key, "retry-stream", "", body)
			if got := replyText(t, s.until(t, "")); got != "Streamed back." || s.resp.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("resent after the success: %q, want it replayed", got)
			}
			if n := asked() - before; n != 2 {
				t.Errorf("the model was asked %d times, want 2", n)
			}
		})
	})

	t.Run("ErrNotRetryableReplayed", func(t *testing.T) {
		each(t, func(t *testing.T, e *chatEnv, asked func() int) {
			before := asked()
			e.fake.Enqueue(anthropictest.Status(400, nil, ""))
			r, err := postChat(ctx, t, e.url, e.alice.key, "retry-400", body)
			if err != nil {
				t.Fatal(err)
			}
			if r.status < 400 {
				t.Fatalf("first: %d %s, want an error", r.status, r.body)
			}
			again, err := postChat(ctx, t, e.url, e.alice.key, "retry-400", body)
			if err != nil {
				t.Fatal(err)
			}
			if again.status != r.status || again.errorCode() != r.errorCode() {
				t.Errorf("resent: %d %s, want the first failure %d %s", again.status, again.body, r.status, r.body)
			}
			s := postKeyed(ctx, t, e.url, e.alice.key, "retry-400", "", body)
			if evs := s.until(t, ""); replyText(t, evs) != "" || s.resp.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("resent to the stream: %v, want the failure replayed", evs)
			}
			if n := asked() - before; n != 1 {
				t.Errorf("the model was asked %d times, want 1", n)
			}
		})
	})
}

// TestKeyedResendAfterRetryableFailureAnswered: the released turn's
// message was answered since (the user moved on in its session), so
// running it again would store it twice: the key's failure is answered
// again, nothing stored, no model call.
func TestKeyedResendAfterRetryableFailureAnswered(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvDepsOn(t, dsn, func(*server.Deps) {}, nil)
		ctx := context.Background()
		sid := e.MustSession(e.alice).ID
		body := `{"message":"ok","session_id":"` + sid + `"}`
		e.fake.Enqueue(anthropictest.Status(529, nil, ""), anthropictest.Text("Fine.", 6), anthropictest.Text("Fine again.", 6))
		first, err := postChat(ctx, t, e.url, e.alice.key, "moved-on", body)
		if err != nil || first.status != http.StatusServiceUnavailable {
			t.Fatalf("first: %v %d %s", err, first.status, first.body)
		}
		// Sent again without its key: the server's resend of an
		// unanswered message answers it.
		mustPostChat(t, e.url, e.alice.key, "", body)
		before := len(e.fake.Requests())
		again, err := postChat(ctx, t, e.url, e.alice.key, "moved-on", body)
		if err != nil {
			t.Fatal(err)
		}
		if again.status != first.status || again.errorCode() != first.errorCode() {
			t.Errorf("resent with its key: %d %s, want the first failure %d %s", again.status, again.body, first.status, first.body)
		}
		if n := userMessages(t, e, e.alice.ID, sid, "ok"); n != 1 {
			t.Errorf("the message is stored %d times, want 1", n)
		}
		if n := len(e.fake.Requests()) - before; n != 0 {
			t.Errorf("the model was asked %d times, want 0", n)
		}
	})
}
