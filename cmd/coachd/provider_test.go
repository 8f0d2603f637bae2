package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/openai/openaitest"
)

// TestServeOpenAIProvider: `coachd serve` with a pack whose agent names
// provider openai (an Ollama-style server, its key in an environment
// variable the agent file names) runs a tool round against the fake:
// the model calls save_note, coachd runs it and sends the result back as
// a tool message, and the model's answer reaches the client. The key is
// sent upstream, never logged; thinking, which chat completions lack, is
// reported once.
func TestServeOpenAIProvider(t *testing.T) {
	const key = "sk-test-provider-0123456789"
	fake := openaitest.NewServer()
	defer fake.Close()
	fake.SetAPIKey(key)
	dir := t.TempDir()
	agentFile := "---\nname: local\ndescription: A coach on a local model.\ndefault: true\n" +
		"provider:\n  name: openai\n  base_url: " + fake.URL() + "\n  api_key_env: COACHD_TEST_OPENAI_KEY\n" +
		"model: llama3.1:8b\nmax_tokens: 4096\nthinking: 2048\ntools: [save_note]\n---\nYou are a terse running coach.\n"
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "local.md"), []byte(agentFile), 0o644); err != nil {
		t.Fatal(err)
	}
	p := MustStart(t, []string{"COACHD_TEST_OPENAI_KEY=" + key, "ANTHROPIC_API_KEY="},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--pack", dir, "--rate-limit", "off")
	fake.Enqueue(
		openaitest.Calls(openaitest.Call{ID: "call_note", Name: "save_note",
			Args: `{"note_type":"preference","title":"Runs","content":"Prefers morning runs"}`, Split: 7}),
		openaitest.Text("Noted: mornings it is."),
	)

	req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream", strings.NewReader(`{"message":"I like running in the morning"}`))
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("stream: %v %v\n%s", resp, err, p.stderr)
	}
	defer resp.Body.Close()
	var names []string
	var text, end string
	er := client.NewEventReader(bufio.NewReader(resp.Body))
	for {
		ev, err := er.Next()
		if err != nil {
			t.Fatalf("stream ended after %v: %v\n%s", names, err, p.stderr)
		}
		names = append(names, ev.Name)
		var data struct {
			Text       string `json:"text"`
			StopReason string `json:"stop_reason"`
		}
		json.Unmarshal(ev.Data, &data)
		switch ev.Name {
		case "content_delta":
			text += data.Text
		case "error":
			t.Fatalf("error event %s\n%s", ev.Data, p.stderr)
		}
		if ev.Name == "message_end" {
			end = data.StopReason
			break
		}
	}
	got := strings.Join(names, ",")
	fc, fr := strings.Index(got, "function_call"), strings.Index(got, "function_result")
	if fc < 0 || fr < fc || text != "Noted: mornings it is." || end != "end_turn" {
		t.Fatalf("events %s, text %q, stop %q", got, text, end)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 || reqs[0].Model != "llama3.1:8b" || reqs[0].Header.Get("Authorization") != "Bearer "+key {
		t.Fatalf("%d upstream requests; first for %q", len(reqs), reqs[0].Model)
	}
	if res := reqs[1].ToolResults()["call_note"]; res == "" || strings.HasPrefix(res, "Error") {
		t.Errorf("save_note result sent back: %q", res)
	}
	if len(reqs[0].Tools) != 1 || reqs[0].Tools[0].Function.Name != "save_note" || reqs[0].Messages[0].Role != "system" {
		t.Errorf("first request: tools %+v, first role %q", reqs[0].Tools, reqs[0].Messages[0].Role)
	}
	p.stderr.waitFor(t, regexp.MustCompile(`feature=thinking`))
	logs := p.stderr.String()
	if strings.Contains(logs, key) {
		t.Errorf("the API key was logged")
	}
	if n := strings.Count(logs, "feature=thinking"); n != 1 {
		t.Errorf("thinking degradation logged %d times, want once:\n%s", n, logs)
	}
}
