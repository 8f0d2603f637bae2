package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

type expected struct {
	FinalMessage *struct {
		ID         string            `json:"id"`
		Model      string            `json:"model"`
		Content    []json.RawMessage `json:"content"`
		StopReason *string           `json:"stop_reason"`
		Usage      *coachd.Usage     `json:"usage"`
	} `json:"final_message"`
	StreamError *struct {
		Error struct{ Type string } `json:"error"`
	} `json:"stream_error"`
}

// TestConformance replays every .sse fixture through the fake, the SDK and
// the adapter, and compares with the fixture's .expected.json.
func TestConformance(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		dir := fixturesDir(t)
		files, _ := filepath.Glob(filepath.Join(dir, "*.sse"))
		if len(files) == 0 {
			t.Skip("no .sse fixtures")
		}
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{Untraced: untraced})
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".sse")
			t.Run(name, func(t *testing.T) {
				raw, err := os.ReadFile(filepath.Join(dir, name+".expected.json"))
				if err != nil {
					t.Fatal(err)
				}
				var want expected
				if err := json.Unmarshal(raw, &want); err != nil {
					t.Fatal(err)
				}
				srv.Enqueue(anthropictest.ReplayFile(f))
				evs, got, err := drain(m.Stream(context.Background(), hello()))
				checkError(t, name, want, err)
				checkEvents(t, evs, got)
				fm := want.FinalMessage
				if fm == nil {
					if len(got.Blocks) != 0 || got.ID != "" {
						t.Errorf("response = %+v, want empty", got)
					}
					return
				}
				if got.ID != fm.ID || got.Model != fm.Model {
					t.Errorf("id, model = %q, %q, want %q, %q", got.ID, got.Model, fm.ID, fm.Model)
				}
				if stop := deref(fm.StopReason); got.StopReason != stop {
					t.Errorf("stop_reason = %q, want %q", got.StopReason, stop)
				}
				if fm.Usage != nil {
					want := *fm.Usage
					if got.StopReason == "" {
						// Cut before message_delta's count: coachd charges the
						// output streamed so far (issue 20 finding 5).
						want.OutputTokens = max(want.OutputTokens, coachd.TokensOfBytes(streamedBytes(evs)))
					}
					if got.Usage != want {
						t.Errorf("usage = %+v, want %+v", got.Usage, want)
					}
				}
				if len(got.Blocks) != len(fm.Content) {
					t.Fatalf("%d blocks, want %d", len(got.Blocks), len(fm.Content))
				}
				for i, b := range got.Blocks {
					gb, err := json.Marshal(b)
					if err != nil {
						t.Fatal(err)
					}
					if !jsonEqual(t, gb, fm.Content[i]) {
						t.Errorf("block %d:\n got %s\nwant %s", i, gb, fm.Content[i])
					}
				}
			})
		}
	})
}

// checkEvents checks that the events tell the same story as the message:
// the deltas of each block add up to it, and a tool_use_start names each
// tool call (none for a block the stream never opened in this message).
func checkEvents(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse) {
	t.Helper()
	text := map[int]string{}
	starts := map[int]string{}
	for _, ev := range evs {
		switch ev.Type {
		case coachd.ModelTextDelta, coachd.ModelThinkingDelta:
			text[ev.Index] += ev.Text
		case coachd.ModelToolUseStart:
			starts[ev.Index] = ev.ID
		}
	}
	for i, b := range resp.Blocks {
		switch b.Type {
		case coachd.BlockText:
			if text[i] != b.Text {
				t.Errorf("block %d: deltas %q, text %q", i, text[i], b.Text)
			}
		case coachd.BlockThinking:
			if text[i] != b.Thinking {
				t.Errorf("block %d: deltas %q, thinking %q", i, text[i], b.Thinking)
			}
		case coachd.BlockToolUse:
			if starts[i] != b.ID {
				t.Errorf("block %d: tool_use_start %q, block %q", i, starts[i], b.ID)
			}
		}
	}
	if len(starts) > len(resp.Blocks) {
		t.Errorf("tool_use_start events %v beyond the message's %d blocks", starts, len(resp.Blocks))
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkError checks the documented typed outcome of error fixtures.
func checkError(t *testing.T, name string, want expected, err error) {
	t.Helper()
	if want.StreamError == nil {
		if err != nil {
			t.Fatalf("err = %v, want none", err)
		}
		return
	}
	var ce *coachd.Error
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *coachd.Error", err)
	}
	switch want.StreamError.Error.Type {
	case "overloaded_error":
		if ce.Code != coachd.EUPSTREAMBUSY || !ce.Retryable {
			t.Errorf("code, retryable = %s, %v, want %s, true", ce.Code, ce.Retryable, coachd.EUPSTREAMBUSY)
		}
	default: // spliced message_start
		if ce.Code != coachd.EAPI || ce.Retryable {
			t.Errorf("code, retryable = %s, %v, want %s, false", ce.Code, ce.Retryable, coachd.EAPI)
		}
	}
}

// TestErrorFixtures serves the recorded HTTP error bodies (40-43).
func TestErrorFixtures(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		dir := fixturesDir(t)
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{Untraced: untraced})
		tests := []struct {
			file      string
			code      string
			retryable bool
		}{
			{"40-error-400-invalid-request.json", coachd.EINVALID, false},
			{"41-error-404-not-found.json", coachd.ENOTFOUND, false},
			{"42-error-429-rate-limit.json", coachd.EUPSTREAMBUSY, true},
			{"43-error-529-overloaded.json", coachd.EUPSTREAMBUSY, true},
		}
		for _, tt := range tests {
			t.Run(tt.file, func(t *testing.T) {
				for i, r := range errorReplies(t, filepath.Join(dir, tt.file)) {
					srv.Enqueue(r)
					_, _, err := drain(m.Stream(context.Background(), hello()))
					var ce *coachd.Error
					if !errors.As(err, &ce) {
						t.Fatalf("%d: err = %v, want *coachd.Error", i, err)
					}
					if ce.Code != tt.code || ce.Retryable != tt.retryable {
						t.Errorf("%d: code, retryable = %s, %v, want %s, %v", i, ce.Code, ce.Retryable, tt.code, tt.retryable)
					}
				}
			})
		}
	})
}

// errorReplies reads an error fixture: one recorded response (status,
// headers, body) or a list of observed bodies.
func errorReplies(t *testing.T, path string) []anthropictest.Reply {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Status struct {
			Code int `json:"code"`
		} `json:"status"`
		Headers  http.Header     `json:"headers"`
		Body     json.RawMessage `json:"body"`
		Observed []struct {
			Status  any             `json:"status"`
			Body    json.RawMessage `json:"body"`
			BodyRaw string          `json:"body_raw"`
		} `json:"observed"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	if f.Status.Code != 0 {
		f.Headers.Del("content-length")
		return []anthropictest.Reply{anthropictest.Status(f.Status.Code, f.Headers, string(f.Body))}
	}
	var out []anthropictest.Reply
	for _, o := range f.Observed {
		code, ok := o.Status.(float64)
		if !ok {
			continue // an in-stream payload, covered by fixtures 16 and 17
		}
		body := o.BodyRaw
		if body == "" {
			body = string(o.Body)
		}
		if body == "" || body == "null" {
			continue
		}
		out = append(out, anthropictest.Status(int(code), nil, body))
	}
	if len(out) == 0 {
		t.Fatalf("%s: no HTTP error bodies", path)
	}
	return out
}

// streamedBytes is the output a stream carried: text, thinking and tool
// input deltas.
func streamedBytes(evs []coachd.ModelEvent) int {
	n := 0
	for _, ev := range evs {
		switch ev.Type {
		case coachd.ModelTextDelta, coachd.ModelThinkingDelta, coachd.ModelInputJSONDelta:
			n += len(ev.Text)
		}
	}
	return n
}
