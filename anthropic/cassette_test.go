package anthropic_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// sdkDir is the SDK module's directory in the module cache.
func sdkDir(tb testing.TB) string {
	tb.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/anthropics/anthropic-sdk-go").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		tb.Skipf("SDK module dir not found: %v", err)
	}
	return filepath.Join(dir, "toolrunner", "testdata")
}

type recorded struct {
	Model     string                `json:"model"`
	MaxTokens int64                 `json:"max_tokens"`
	Messages  []coachd.ModelMessage `json:"messages"`
	Tools     []coachd.ToolSpec     `json:"tools"`
}

// TestCassettes replays every SDK cassette conversation. The adapter is
// given the recorded first request and, for each later turn, the tool
// results the recording shows, with its own assembled answer as the
// assistant turn. Each request it sends must equal the recorded body as
// JSON. Normalisation: "stream" is ignored, an empty "tools" list counts
// as none (the recordings mix streaming
// and non-streaming calls; the adapter always streams), and caching is off
// (NoCache) because the recordings have no cache_control.
func TestCassettes(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		dir := sdkDir(t)
		files, _ := filepath.Glob(filepath.Join(dir, "cassettes", "*.yaml"))
		if len(files) == 0 {
			t.Skip("no cassettes in the SDK module")
		}
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".yaml")
			t.Run(name, func(t *testing.T) {
				its, err := anthropictest.LoadCassette(f)
				if err != nil {
					t.Fatal(err)
				}
				srv := MustServer(t)
				m := newModel(srv, anthropic.Config{NoCache: true, Untraced: untraced})
				var conv recorded
				if err := json.Unmarshal(its[0].RequestBody, &conv); err != nil {
					t.Fatal(err)
				}
				var texts []string
				for i, it := range its {
					if i > 0 {
						var next recorded
						if err := json.Unmarshal(it.RequestBody, &next); err != nil {
							t.Fatal(err)
						}
						if len(next.Messages) != len(conv.Messages)+1 {
							t.Fatalf("turn %d: recording has %d messages, want %d", i, len(next.Messages), len(conv.Messages)+1)
						}
						conv.Messages = append(conv.Messages, next.Messages[len(conv.Messages)])
						conv.Tools = next.Tools // custom_handling drops its tools mid-conversation
					}
					srv.Enqueue(it.Reply)
					req := &coachd.ModelRequest{Model: conv.Model, MaxTokens: conv.MaxTokens,
						Messages: conv.Messages, Tools: conv.Tools}
					_, resp, err := drain(m.Stream(context.Background(), req))
					if err != nil {
						t.Fatalf("turn %d: %v", i, err)
					}
					reqs := srv.Requests()
					sent := withoutStream(t, reqs[len(reqs)-1].Raw)
					if want := withoutStream(t, it.RequestBody); !jsonEqual(t, sent, want) {
						t.Errorf("turn %d request:\n got %s\nwant %s", i, sent, want)
					}
					checkAnswer(t, it, resp)
					texts = append(texts, coachd.BlocksText(resp.Blocks))
					conv.Messages = append(conv.Messages, coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: resp.Blocks})
				}
				checkGoldens(t, filepath.Join(dir, "snapshots"), name, texts)
			})
		}
	})
}

func withoutStream(t *testing.T, body []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("body %s: %v", body, err)
	}
	delete(m, "stream")
	if string(m["tools"]) == "[]" {
		delete(m, "tools") // an empty list, as the adapter leaves it out
	}
	out, _ := json.Marshal(m)
	return out
}

// checkAnswer compares the assembled message with the recorded one.
func checkAnswer(t *testing.T, it anthropictest.Interaction, resp *coachd.ModelResponse) {
	t.Helper()
	var want struct {
		ID         string            `json:"id"`
		Content    []json.RawMessage `json:"content"`
		StopReason string            `json:"stop_reason"`
		Usage      coachd.Usage      `json:"usage"`
	}
	body := it.Reply.Message
	if len(body) == 0 {
		return // a streamed recording: covered by the request of the next turn and by fixture 07/08
	}
	if err := json.Unmarshal(body, &want); err != nil {
		t.Fatal(err)
	}
	if resp.ID != want.ID || resp.StopReason != want.StopReason || resp.Usage != want.Usage {
		t.Errorf("answer %s %s %+v, want %s %s %+v", resp.ID, resp.StopReason, resp.Usage, want.ID, want.StopReason, want.Usage)
	}
	got, _ := json.Marshal(resp.Blocks)
	wantContent, _ := json.Marshal(want.Content)
	if !jsonEqual(t, got, wantContent) {
		t.Errorf("content:\n got %s\nwant %s", got, wantContent)
	}
}

// checkGoldens checks the SDK's golden text snapshots of this cassette:
// each must be the text of one turn, or of all turns joined by newlines.
func checkGoldens(t *testing.T, dir, name string, texts []string) {
	t.Helper()
	goldens, _ := filepath.Glob(filepath.Join(dir, name+"*.golden"))
	for _, g := range goldens {
		if strings.HasSuffix(g, "_types.golden") {
			continue // SDK event type names, not message text
		}
		raw, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSpace(string(raw))
		found := strings.Join(nonEmpty(texts), "\n") == want
		for _, s := range texts {
			found = found || s == want
		}
		if !found {
			t.Errorf("%s: %q not among answers %q", filepath.Base(g), want, texts)
		}
	}
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
