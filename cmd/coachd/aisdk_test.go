package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAISDKClients plays the Vercel AI SDK against the real binary:
// streamText through @ai-sdk/openai-compatible, and useChat's transport
// (DefaultChatTransport + readUIMessageStream) on ?protocol=ai-sdk with a
// tool round, a paused turn and its answer through addToolResult.
func TestAISDKClients(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "aisdkclient"), "ai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	fake.Enqueue(
		anthropictest.Text("Hello from coachd.", 4),
		anthropictest.Blocks(anthropictest.TextBlock("Checking your notes.", 4), anthropictest.ToolUse("toolu_n", "list_notes", `{}`)),
		anthropictest.Text("No notes yet: start at the airport.", 4),
		anthropictest.Blocks(anthropictest.TextBlock("Let me ask.", 4),
			anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
		anthropictest.Text("Downtown it is.", 4),
	)
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), p.url, p.key)
	cmd.Dir = dir
	raw, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	type part struct {
		Type, State, Text, ToolCallID string
		Output                        any
		Input                         map[string]any
	}
	var out struct {
		StreamText struct{ Text, FinishReason string }
		First      []part
		Paused     []part
		Resumed    []part
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.StreamText.Text != "Hello from coachd." || out.StreamText.FinishReason != "stop" {
		t.Errorf("streamText: %+v", out.StreamText)
	}
	texts := func(parts []part) string {
		var sb strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				sb.WriteString(p.Text + "|")
			}
		}
		return sb.String()
	}
	find := func(parts []part, typ string) *part {
		for i := range parts {
			if parts[i].Type == typ {
				return &parts[i]
			}
		}
		return nil
	}
	if got := texts(out.First); got != "Checking your notes.|No notes yet: start at the airport.|" {
		t.Errorf("first texts %q (%+v)", got, out.First)
	}
	if tool := find(out.First, "tool-list_notes"); tool == nil || tool.State != "output-available" {
		t.Errorf("first tool part: %+v", out.First)
	}
	if tool := find(out.Paused, "tool-show_options"); tool == nil || tool.State != "input-available" || tool.ToolCallID != "toolu_o" || tool.Input["prompt"] != "Pick a zone" {
		t.Errorf("paused tool part: %+v", out.Paused)
	}
	if !strings.Contains(texts(out.Resumed), "Downtown it is.") {
		t.Errorf("resumed: %+v", out.Resumed)
	}
	reqs := fake.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || res[0].ResultText() != "Downtown" {
		t.Errorf("the paused tool's result: %+v", res)
	}
}
