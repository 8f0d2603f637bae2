package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

func code(t *testing.T, err error) *coachd.Error {
	t.Helper()
	var ce *coachd.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *coachd.Error", err)
	}
	return ce
}

func TestRetry(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		t.Run("OK429RetryAfter", func(t *testing.T) {
			srv := MustServer(t)
			m := newModel(srv, anthropic.Config{MaxRetries: 2, Untraced: untraced})
			srv.Enqueue(anthropictest.Status(429, http.Header{"Retry-After": {"1"}}, ""), anthropictest.Text("ok", 0))
			start := time.Now()
			_, resp, err := drain(m.Stream(context.Background(), hello()))
			if err != nil {
				t.Fatal(err)
			}
			if got := len(srv.Requests()); got != 2 {
				t.Errorf("requests = %d, want 2", got)
			}
			if el := time.Since(start); el < time.Second {
				t.Errorf("elapsed %v, want >= 1s (retry-after)", el)
			}
			if got := coachd.BlocksText(resp.Blocks); got != "ok" {
				t.Errorf("text = %q", got)
			}
		})
		t.Run("Err529ThreeTimes", func(t *testing.T) {
			srv := MustServer(t)
			m := newModel(srv, anthropic.Config{MaxRetries: 2, Untraced: untraced}) // the SDK default
			busy := anthropictest.Status(529, http.Header{"Retry-After-Ms": {"20"}, "Retry-After": {"7"}}, "")
			srv.Enqueue(busy, busy, busy, anthropictest.Text("never", 0))
			_, _, err := drain(m.Stream(context.Background(), hello()))
			ce := code(t, err)
			if ce.Code != coachd.EUPSTREAMBUSY || !ce.Retryable || ce.RetryAfter != 20*time.Millisecond {
				t.Errorf("error = %s retryable=%v after=%v, want %s true 20ms", ce.Code, ce.Retryable, ce.RetryAfter, coachd.EUPSTREAMBUSY)
			}
			if got := len(srv.Requests()); got != 3 {
				t.Errorf("requests = %d, want 3", got)
			}
		})
		t.Run("ErrMidStreamNotRetried", func(t *testing.T) {
			srv := MustServer(t)
			m := newModel(srv, anthropic.Config{MaxRetries: 2, Untraced: untraced})
			// message_start, content_block_start, ping, "Hello", then the error.
			srv.Enqueue(anthropictest.Text("Hello world", 5).ErrorAfter(4, "", ""), anthropictest.Text("again", 0))
			evs, resp, err := drain(m.Stream(context.Background(), hello()))
			ce := code(t, err)
			if ce.Code != coachd.EUPSTREAMBUSY || !ce.Retryable {
				t.Errorf("error = %s retryable=%v", ce.Code, ce.Retryable)
			}
			if got := len(srv.Requests()); got != 1 {
				t.Errorf("requests = %d, want 1", got)
			}
			if len(evs) != 1 || evs[0].Text != "Hello" {
				t.Errorf("events = %+v", evs)
			}
			if got := coachd.BlocksText(resp.Blocks); got != "Hello" {
				t.Errorf("partial text = %q, want Hello", got)
			}
			// Cut before message_delta: the output is priced from what was
			// streamed, not message_start's placeholder 1 (issue 20 finding 5).
			if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens != coachd.TokensOfBytes(len("Hello")) {
				t.Errorf("usage = %+v, want input > 0 and output %d for the streamed text", resp.Usage, coachd.TokensOfBytes(len("Hello")))
			}
		})
		t.Run("ErrDroppedConnection", func(t *testing.T) {
			srv := MustServer(t)
			m := newModel(srv, anthropic.Config{MaxRetries: 2, Untraced: untraced})
			srv.Enqueue(anthropictest.Text("Hello world", 5).DropAfter(4), anthropictest.Text("again", 0))
			_, resp, err := drain(m.Stream(context.Background(), hello()))
			if ce := code(t, err); ce.Code != coachd.EAPI {
				t.Errorf("code = %s, want %s", ce.Code, coachd.EAPI)
			}
			if got := len(srv.Requests()); got != 1 {
				t.Errorf("requests = %d, want 1", got)
			}
			if got := coachd.BlocksText(resp.Blocks); got != "Hello" {
				t.Errorf("partial text = %q", got)
			}
		})
	})
}

func TestStatusCodes(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{Untraced: untraced})
		for status, want := range map[int]string{400: coachd.EINVALID, 401: coachd.EUPSTREAMAUTH, 403: coachd.EUPSTREAMAUTH,
			404: coachd.ENOTFOUND, 500: coachd.EAPI, 502: coachd.EAPI, 429: coachd.EUPSTREAMBUSY} {
			srv.Enqueue(anthropictest.Status(status, nil, ""))
			_, _, err := drain(m.Stream(context.Background(), hello()))
			if got := code(t, err).Code; got != want {
				t.Errorf("%d: code = %s, want %s", status, got, want)
			}
		}
	})
}

func TestCancel(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{Untraced: untraced})
		srv.Enqueue(anthropictest.Text("Hello world", 5).StallAfter(4))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := m.Stream(ctx, hello())
		defer s.Close()
		if !s.Next() || s.Event().Text != "Hello" {
			t.Fatalf("first event = %+v, err %v", s.Event(), s.Err())
		}
		canceled := time.Now()
		cancel()
		select {
		case at := <-srv.Disconnects():
			if d := at.Sub(canceled); d > 100*time.Millisecond {
				t.Errorf("fake saw the close after %v, want <= 100ms", d)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("fake never saw the connection close")
		}
		if s.Next() {
			t.Fatal("Next after cancel = true")
		}
		if err := s.Err(); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled in chain", err)
		}
		if got := coachd.BlocksText(s.Response().Blocks); got != "Hello" {
			t.Errorf("partial = %q", got)
		}
	})
}

func TestTimeout(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{Timeout: 200 * time.Millisecond, Untraced: untraced})
		srv.Enqueue(anthropictest.Text("Hello world", 5).StallAfter(4))
		_, _, err := drain(m.Stream(context.Background(), hello()))
		if got := code(t, err).Code; got != coachd.ETIMEOUT {
			t.Errorf("code = %s, want %s (%v)", got, coachd.ETIMEOUT, err)
		}
	})
}

// TestRoundTrip streams every block kind, checks the events, and sends the
// assembled message back: thinking keeps its signature, redacted thinking
// its data, byte for byte.
func TestRoundTrip(t *testing.T) {
	srv := MustServer(t)
	m := newModel(srv, anthropic.Config{})
	srv.Enqueue(anthropictest.Blocks(
		anthropictest.Thinking("Let me think about the weather.", "sig-ABC=="),
		anthropictest.Redacted("EmwKAhgBEgy3va3pzix/LafPsn4a"),
		anthropictest.TextBlock("Checking Paris.", 4),
		anthropictest.ToolUse("toolu_1", "get_weather", `{"city":"Paris","units":"c"}`, 3, 10),
	).Padded(), anthropictest.Text("It is sunny.", 0))
	req := hello()
	req.ThinkingBudget = 1024
	req.MaxTokens = 2048
	evs, resp, err := drain(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, ev := range evs {
		if len(kinds) == 0 || kinds[len(kinds)-1] != ev.Type {
			kinds = append(kinds, ev.Type)
		}
	}
	want := "thinking_delta signature_delta block_stop text_delta block_stop tool_use_start input_json_delta block_stop message_delta"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	if last := evs[len(evs)-1]; last.StopReason != coachd.StopToolUse || last.Usage.OutputTokens == 0 {
		t.Errorf("message_delta = %+v", last)
	}
	got, _ := json.Marshal(resp.Blocks)
	wantBlocks := `[{"type":"thinking","thinking":"Let me think about the weather.","signature":"sig-ABC=="},` +
		`{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4a"},{"type":"text","text":"Checking Paris."},` +
		`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris","units":"c"}}]`
	if string(got) != wantBlocks {
		t.Fatalf("blocks:\n got %s\nwant %s", got, wantBlocks)
	}
	req.Messages = append(req.Messages,
		coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: resp.Blocks},
		coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("toolu_1", "sunny", false)}})
	if _, _, err := drain(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	var sent struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(reqs[1].Raw, &sent)
	if got := string(sent.Messages[1].Content); got != wantBlocks {
		t.Errorf("assistant turn sent back:\n got %s\nwant %s", got, wantBlocks)
	}
}
