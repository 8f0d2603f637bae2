package server_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// replayTool answers with the results a recording shows, by tool_use id.
type replayTool struct {
	spec    coachd.ToolSpec
	results map[string]coachd.Block
}

func (r replayTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: r.spec.Name, Description: r.spec.Description, InputSchema: r.spec.InputSchema, Category: coachd.ToolInstant}
}

func (r replayTool) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	b, ok := r.results[call.ID]
	if !ok {
		return coachd.ToolResult{Content: "no recorded result for " + call.ID, IsError: true}, nil
	}
	return coachd.ToolResult{Content: b.ResultText(), IsError: b.IsError}, nil
}

type recordedRequest struct {
	Model     string                `json:"model"`
	MaxTokens int64                 `json:"max_tokens"`
	Messages  []coachd.ModelMessage `json:"messages"`
	Tools     []coachd.ToolSpec     `json:"tools"`
}

// TestCassettesEndToEnd runs the SDK's recorded tool-runner conversations
// through POST /v1/chat/stream: the fake serves the recorded answers in
// order, the tools return what the recordings returned, and every request
// coachd sends carries the recorded messages and tools. The final answer
// must match the SDK's golden snapshot where there is one.
//
// Normalisation: tool_result content is compared as text (the SDK sent a
// list of text blocks, coachd sends the string). custom_handling is left
// out: the SDK test changes the tool list between turns by hand, which a
// coach's fixed tool set does not do.
func TestCassettesEndToEnd(t *testing.T) {
	dir := sdkTestdata(t)
	files, _ := filepath.Glob(filepath.Join(dir, "cassettes", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no cassettes in the SDK module")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".yaml")
		if name == "tool_runner_custom_handling" {
			continue
		}
		t.Run(name, func(t *testing.T) {
			its, err := anthropictest.LoadCassette(f)
			if err != nil {
				t.Fatal(err)
			}
			recs := make([]recordedRequest, len(its))
			results := map[string]coachd.Block{}
			for i, it := range its {
				if err := json.Unmarshal(it.RequestBody, &recs[i]); err != nil {
					t.Fatal(err)
				}
				for _, m := range recs[i].Messages {
					for _, b := range m.Blocks {
						if b.Type == coachd.BlockToolResult {
							results[b.ToolUseID] = b
						}
					}
				}
			}
			ag := &agent.Agent{Name: "cassette", Model: recs[0].Model, MaxTokens: recs[0].MaxTokens}
			var tools []coachd.Tool
			for _, spec := range recs[0].Tools {
				tools = append(tools, replayTool{spec: spec, results: results})
			}
			e := MustChatEnv(t, ag, tools...)
			for _, it := range its {
				e.fake.Enqueue(it.Reply)
			}
			s := e.chat(context.Background(), e.alice.key, "", mustJSONString(t, map[string]string{"message": recs[0].Messages[0].Blocks[0].Text}))
			if s.status != 200 {
				t.Fatalf("%d %s", s.status, s.raw)
			}
			sent := e.fake.Requests()
			for i, rec := range recs {
				var got recordedRequest
				if err := json.Unmarshal(sent[i].Raw, &got); err != nil {
					t.Fatal(err)
				}
				if g, w := normalize(t, got.Messages), normalize(t, rec.Messages); !reflect.DeepEqual(g, w) {
					t.Errorf("request %d messages:\n got %s\nwant %s", i, mustJSONString(t, g), mustJSONString(t, w))
				}
				if g, w := normalize(t, got.Tools), normalize(t, rec.Tools); !reflect.DeepEqual(g, w) {
					t.Errorf("request %d tools:\n got %s\nwant %s", i, mustJSONString(t, g), mustJSONString(t, w))
				}
			}
			if len(sent) > len(recs) {
				return // the recording stops mid-conversation (max iterations, cancel): no final answer to compare
			}
			// A golden is the final answer, or every answer of the turn
			// joined by newlines (the SDK's "all messages" snapshots).
			msgs, _, _ := e.alice.c.Messages(context.Background(), s.header.Get("X-Coachd-Session-Id"), coachd.Page{})
			var answers []string
			for _, m := range msgs {
				if m.Role == coachd.RoleAssistant && m.Content != "" {
					answers = append(answers, m.Content)
				}
			}
			final := answers[len(answers)-1]
			for _, g := range goldens(t, dir, name) {
				if g != final && g != strings.Join(answers, "\n") {
					t.Errorf("golden %q\nanswers %q", g, answers)
				}
			}
		})
	}
}

// normalize turns v into plain JSON values with tool_result content as
// text.
func normalize(t *testing.T, v any) any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	json.Unmarshal(raw, &out)
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if x["type"] == "tool_result" {
				var b coachd.Block
				raw, _ := json.Marshal(x)
				json.Unmarshal(raw, &b)
				x["content"] = b.ResultText()
				if x["is_error"] == false {
					delete(x, "is_error")
				}
			}
			for _, v := range x {
				walk(v)
			}
		case []any:
			for _, v := range x {
				walk(v)
			}
		}
	}
	walk(out)
	return out
}

func goldens(t *testing.T, dir, name string) []string {
	var out []string
	files, _ := filepath.Glob(filepath.Join(dir, "snapshots", name+"*.golden"))
	for _, f := range files {
		if strings.HasSuffix(f, "_types.golden") || strings.Contains(f, "_step_1") {
			continue // event type names; an intermediate step
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.TrimSpace(string(b)))
	}
	return out
}

func sdkTestdata(t *testing.T) string {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/anthropics/anthropic-sdk-go").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("SDK module not found: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "toolrunner", "testdata")
}

func mustJSONString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
