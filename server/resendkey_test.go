package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/cutproxy"
	"github.com/coachd/coachd/server"
)

// keyedStream is a POST /v1/chat/stream sent with an Idempotency-Key
// (none when key is ""), read event by event.
type keyedStream struct {
	resp *http.Response
	er   *client.EventReader
}

func postKeyed(ctx context.Context, t *testing.T, base, apiKey, key, lastID, body string) *keyedStream {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/chat/stream", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+apiKey)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return &keyedStream{resp: resp, er: client.NewEventReader(resp.Body)}
}

// until reads events up to the first named name (included); all of them
// when name is "".
func (k *keyedStream) until(t *testing.T, name string) []client.Event {
	t.Helper()
	if k.resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(k.resp.Body)
		t.Fatalf("status %d: %s", k.resp.StatusCode, b)
	}
	var out []client.Event
	for {
		ev, err := k.er.Next()
		if errors.Is(err, io.EOF) && name == "" {
			return out
		}
		if err != nil {
			t.Fatalf("stream ended before %q after %d events: %v", name, len(out), err)
		}
		out = append(out, ev)
		if ev.Name == name {
			return out
		}
	}
}

// replyText is the text of a coachd stream's content deltas.
func replyText(t *testing.T, evs []client.Event) string {
	t.Helper()
	var sb strings.Builder
	for _, ev := range evs {
		if ev.Name == "content_delta" {
			var d struct{ Text string }
			if err := json.Unmarshal(ev.Data, &d); err != nil {
				t.Fatal(err)
			}
			sb.WriteString(d.Text)
		}
	}
	return sb.String()
}

// sessionOf is the session of a coachd stream's message_start.
func sessionOf(t *testing.T, evs []client.Event) string {
	t.Helper()
	var start struct {
		SessionID string `json:"session_id"`
	}
	if len(evs) == 0 || evs[0].Name != "message_start" || json.Unmarshal(evs[0].Data, &start) != nil {
		t.Fatalf("no message_start first in %v", evs)
	}
	return start.SessionID
}

// userMessages counts the session's stored user messages saying text.
func userMessages(t *testing.T, e *chatEnv, userID, sid, text string) int {
	t.Helper()
	msgs, err := e.db.History(context.Background(), userID, sid)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range msgs {
		if m.Role == coachd.RoleUser && m.Content == text {
			n++
		}
	}
	return n
}

// TestChatStreamResendWithKey: a client whose network dropped as its
// turn ended (message_end written, the response never read to its end)
// sends its message again. Without a key that is a second turn: the
// message stored twice, the model asked twice, and nothing in "ok", "ok"
// tells a resend from a repeat. With the same Idempotency-Key it is the
// first turn's events again, from the log: one stored message, one model
// call, the same reply.
func TestChatStreamResendWithKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustChatEnvDepsOn(t, dsn, func(*server.Deps) {}, nil)
		ctx := context.Background()
		const body = `{"message":"ok"}`

		t.Run("OK", func(t *testing.T) {
			p := cutproxy.New(t, strings.TrimPrefix(e.url, "http://"))
			e.fake.Enqueue(anthropictest.Text("Fine, see you tomorrow.", 6))
			first := postKeyed(ctx, t, p.URL(), e.alice.key, "msg-1", "", body).until(t, "message_end")
			p.Cut()
			sid := sessionOf(t, first)

			again := postKeyed(ctx, t, e.url, e.alice.key, "msg-1", "", body)
			if got := again.resp.Header.Get("Idempotent-Replayed"); got != "true" {
				t.Errorf("Idempotent-Replayed = %q, want true", got)
			}
			evs := again.until(t, "")
			if got, want := replyText(t, evs), "Fine, see you tomorrow."; got != want {
				t.Errorf("resent: reply %q, want %q", got, want)
			}
			if len(evs) != len(first) || evs[len(evs)-1].Name != "message_end" {
				t.Errorf("resent: %d events ending %q, want the first turn's %d", len(evs), evs[len(evs)-1].Name, len(first))
			}
			if n := len(e.fake.Requests()); n != 1 {
				t.Errorf("the model was asked %d times, want 1", n)
			}
			if n := userMessages(t, e, e.alice.ID, sid, "ok"); n != 1 {
				t.Errorf("the message is stored %d times, want 1", n)
			}

			// After the last event it had: only what follows.
			rest := postKeyed(ctx, t, e.url, e.alice.key, "msg-1", first[0].ID, body).until(t, "")
			if len(rest) != len(first)-1 || rest[0].ID != first[1].ID {
				t.Errorf("after %s: %d events from %q, want %d from %q", first[0].ID, len(rest), rest[0].ID, len(first)-1, first[1].ID)
			}
		})

		t.Run("RepeatWithoutKey", func(t *testing.T) {
			before := len(e.fake.Requests())
			e.fake.Enqueue(anthropictest.Text("Good.", 6), anthropictest.Text("Good again.", 6))
			first := postKeyed(ctx, t, e.url, e.alice.key, "", "", body).until(t, "")
			sid := sessionOf(t, first)
			postKeyed(ctx, t, e.url, e.alice.key, "", "", `{"message":"ok","session_id":"`+sid+`"}`).until(t, "message_end")
			if n := len(e.fake.Requests()) - before; n != 2 {
				t.Errorf("the model was asked %d times, want 2", n)
			}
			if n := userMessages(t, e, e.alice.ID, sid, "ok"); n != 2 {
				t.Errorf("the message is stored %d times, want 2", n)
			}
		})

		t.Run("ErrKeyOtherBody", func(t *testing.T) {
			before := len(e.fake.Requests())
			e.fake.Enqueue(anthropictest.Text("Sure.", 6))
			postKeyed(ctx, t, e.url, e.alice.key, "msg-2", "", body).until(t, "")
			other := postKeyed(ctx, t, e.url, e.alice.key, "msg-2", "", `{"message":"not ok"}`)
			b, _ := io.ReadAll(other.resp.Body)
			if other.resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), `"conflict"`) || !strings.Contains(string(b), "Idempotency-Key") {
				t.Errorf("the key with another body: %d %s, want 409 conflict naming Idempotency-Key", other.resp.StatusCode, b)
			}
			if n := len(e.fake.Requests()) - before; n != 1 {
				t.Errorf("the model was asked %d times, want 1", n)
			}
		})

		t.Run("OtherUsersKey", func(t *testing.T) {
			before := len(e.fake.Requests())
			e.fake.Enqueue(anthropictest.Text("Alice's.", 6), anthropictest.Text("Bob's.", 6))
			a := postKeyed(ctx, t, e.url, e.alice.key, "shared-key", "", body).until(t, "")
			b := postKeyed(ctx, t, e.url, e.bob.key, "shared-key", "", body)
			if b.resp.Header.Get("Idempotent-Replayed") != "" {
				t.Error("bob's request was answered with alice's turn")
			}
			bevs := b.until(t, "")
			if got, want := replyText(t, bevs), "Bob's."; got != want || replyText(t, a) != "Alice's." {
				t.Errorf("replies %q and %q, want Alice's. and Bob's.", replyText(t, a), got)
			}
			if n := len(e.fake.Requests()) - before; n != 2 {
				t.Errorf("the model was asked %d times, want 2", n)
			}
		})

		t.Run("ErrKeyLength", func(t *testing.T) {
			r := postKeyed(ctx, t, e.url, e.alice.key, strings.Repeat("k", 201), "", body)
			if b, _ := io.ReadAll(r.resp.Body); r.resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "Idempotency-Key") {
				t.Errorf("a 201-character key: %d %s, want 400 naming Idempotency-Key", r.resp.StatusCode, b)
			}
		})
	})
}

// resendGate is a tool that tells when it runs and waits for release.
type resendGate struct{ started, release chan struct{} }

func (g resendGate) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "gate", Description: "gate", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (g resendGate) Execute(ctx context.Context, _ coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	close(g.started)
	select {
	case <-g.release:
		return coachd.ToolResult{Content: "done"}, nil
	case <-ctx.Done():
		return coachd.ToolResult{}, ctx.Err()
	}
}

// TestChatStreamResendWhileRunning: the message sent again with its key
// while its turn still runs (its client lost the stream mid-turn) follows
// that turn, from its start to its end, instead of stopping it and
// running the message again.
func TestChatStreamResendWhileRunning(t *testing.T) {
	g, e := gatedChat(t)
	const body = `{"message":"check it"}`
	ctx, drop := context.WithCancel(context.Background())
	first := postKeyed(ctx, t, e.url, e.alice.key, "run-1", "", body)
	first.until(t, "function_call")
	<-g.started
	drop() // the client's network goes; the turn goes on (on_disconnect: continue)

	again := postKeyed(context.Background(), t, e.url, e.alice.key, "run-1", "", body)
	evs := again.until(t, "function_call")
	close(g.release)
	evs = append(evs, again.until(t, "")...)
	if got, want := replyText(t, evs), "Let me look. All done."; got != want {
		t.Errorf("resent: reply %q, want %q", got, want)
	}
	if evs[0].Name != "message_start" || evs[len(evs)-1].Name != "message_end" {
		t.Errorf("resent: events from %q to %q, want message_start to message_end", evs[0].Name, evs[len(evs)-1].Name)
	}
	if n := len(e.fake.Requests()); n != 2 {
		t.Errorf("the model was asked %d times, want 2 (the tool round and the reply)", n)
	}
	var start struct {
		SessionID string `json:"session_id"`
	}
	json.Unmarshal(evs[0].Data, &start)
	if n := userMessages(t, e, e.alice.ID, sessionOf(t, evs), "check it"); n != 1 {
		t.Errorf("the message is stored %d times, want 1", n)
	}
}
