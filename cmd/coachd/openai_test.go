package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// needNodePackage returns node and the directory of a Node test client
// whose packages (package-lock.json) are installed; without them the test
// is skipped (failed on CI).
func needNodePackage(t *testing.T, dir, pkg string) (node, abs string) {
	t.Helper()
	node = needNode(t)
	abs, _ = filepath.Abs(dir)
	if _, err := os.Stat(filepath.Join(abs, "node_modules", pkg)); err != nil {
		msg := "needs the " + pkg + " package: npm ci --prefix cmd/coachd/" + dir
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, abs
}

// TestOpenAIClient plays the official openai npm package against the real
// binary: models are the agents, a completion, the conversation resent
// whole and streamed continues the same session from the stored history,
// and errors come in OpenAI's shape.
func TestOpenAIClient(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "openaiclient"), "openai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	fake.Enqueue(anthropictest.Text("Hello, driver. What is on your mind?", 5),
		anthropictest.Text("Tonight: the stadium lets out at ten.", 5),
		anthropictest.Text("Any time. Drive safe.", 5))
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), p.url, p.key, "default")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	type failure struct {
		Status  int    `json:"status"`
		Type    string `json:"type"`
		Code    string `json:"code"`
		Param   string `json:"param"`
		Message string `json:"message"`
	}
	var out struct {
		Models    []string `json:"models"`
		Retrieved string
		First     struct {
			Text, Finish, Object, Session string
			Usage                         struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		Second struct {
			Text, Finish string
			Chunks       int
			Usage        *struct {
				TotalTokens int `json:"total_tokens"`
			}
		}
		Tools struct {
			Text, Finish, Message string
			Status                int
			ToolCalls             any
		}
		BadModel, NoModel, ToolRequired, BadType, BadKey failure
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if len(out.Models) != 1 || out.Models[0] != "default" {
		t.Errorf("models %v", out.Models)
	}
	if out.Retrieved != "default" {
		t.Errorf("models.retrieve: %q", out.Retrieved)
	}
	if out.First.Text != "Hello, driver. What is on your mind?" || out.First.Finish != "stop" || out.First.Object != "chat.completion" ||
		out.First.Usage.TotalTokens == 0 || !strings.HasPrefix(out.First.Session, "sess_") {
		t.Errorf("first: %+v", out.First)
	}
	if out.Second.Text != "Tonight: the stadium lets out at ten." || out.Second.Finish != "stop" || out.Second.Usage == nil ||
		out.Second.Usage.TotalTokens == 0 || out.Second.Chunks < 4 {
		t.Errorf("second: %+v", out.Second)
	}
	// The second turn continued the first's session, from the store.
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests: %s", len(reqs), raw)
	}
	msgs := reqs[1].Messages()
	if len(msgs) != 3 || msgs[1].Blocks[0].Text != "Hello, driver. What is on your mind?" || msgs[2].Blocks[len(msgs[2].Blocks)-1].Text != "And tonight?" {
		t.Errorf("the second request's history: %+v", msgs)
	}
	var sessions struct{ Sessions []any }
	call(t, "GET", p.url+"/v1/sessions", p.key, "", nil, &sessions)
	if len(sessions.Sessions) != 1 {
		t.Errorf("%d sessions, want the one continued", len(sessions.Sessions))
	}
	// As OpenAI says it: type invalid_request_error, code model_not_found,
	// a missing model a 400.
	if out.BadModel.Status != 404 || out.BadModel.Type != "invalid_request_error" || out.BadModel.Code != "model_not_found" ||
		!strings.Contains(out.BadModel.Message, "default") {
		t.Errorf("unknown model: %+v", out.BadModel)
	}
	if out.NoModel.Status != 400 || out.NoModel.Type != "invalid_request_error" || out.NoModel.Param != "model" {
		t.Errorf("no model: %+v", out.NoModel)
	}
	// The client's own tools (LibreChat, Open WebUI) are not the coach's:
	// the turn runs as without them, in the same session, and the model
	// is not offered them.
	if out.Tools.Text != "Any time. Drive safe." || out.Tools.Finish != "stop" || out.Tools.ToolCalls != nil {
		t.Errorf("a message with the client's tools: %+v", out.Tools)
	}
	if reqs[2].HasTool("web_search") || reqs[2].LastUserText() != "Thanks" {
		t.Errorf("the client's tools reached the model, or another message did: %q", reqs[2].LastUserText())
	}
	if out.ToolRequired.Status != 400 || out.ToolRequired.Type != "invalid_request_error" || out.ToolRequired.Param != "tool_choice" {
		t.Errorf("tool_choice required: %+v", out.ToolRequired)
	}
	// A value of the wrong type is named, as OpenAI's invalid_type is.
	if b := out.BadType; b.Status != 400 || b.Type != "invalid_request_error" || b.Param != "messages[2].content" || b.Code != "type" ||
		!strings.Contains(b.Message, "messages[2].content: must be a string") {
		t.Errorf("a wrong type: %+v", b)
	}
	if out.BadKey.Status != 401 || out.BadKey.Code != "invalid_api_key" {
		t.Errorf("bad key: %+v", out.BadKey)
	}
}

// TestOpenAIClientBusy: a streamed completion whose model is overloaded
// before the reply's first chunk reaches the official openai package as
// an APIError with status 503 (a 200 stream with an error chunk in it has
// no status, and the SDK never retries it), and a client that allows a
// retry gets the reply on its second try, the conversation's new message
// stored once.
func TestOpenAIClientBusy(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "openaiclient"), "openai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	// Overloaded at the stream's start (an HTTP 529 would first be retried
	// by coachd's own SDK, with its backoff).
	overloaded := anthropictest.Text("never sent", 5).ErrorAfter(0, "", "")
	fake.Enqueue(overloaded, anthropictest.Text("Hello.", 5), overloaded, anthropictest.Text("Here now.", 5))
	cmd := exec.Command(node, filepath.Join(dir, "busy.mjs"), p.url, p.key, "default")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	var out struct {
		Busy struct {
			Status int
			Type   string
			Text   *string
		}
		Retried struct {
			Status *int
			Text   string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.Busy.Status != 503 || out.Busy.Type != "rate_limit_error" {
		t.Errorf("busy: %s", raw)
	}
	if out.Retried.Status != nil || out.Retried.Text != "Here now." {
		t.Errorf("retried: %s", raw)
	}
	// The retry ran the stored message again; it did not store it twice.
	reqs := fake.Requests()
	msgs := reqs[len(reqs)-1].Messages()
	if len(msgs) != 3 || len(msgs[2].Blocks) != 1 || msgs[2].Blocks[0].Text != "Again?" {
		t.Errorf("the retried request's history: %+v", msgs)
	}
}

// TestOpenAIClientLimitNotRetried: a user past the month's message limit
// gets the 429 from the official openai package at once; the SDKs retry a
// 429 by themselves (ignoring a Retry-After over a minute), which only
// made the user wait for two more refusals.
func TestOpenAIClientLimitNotRetried(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "openaiclient"), "openai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--monthly-messages", "1")
	fake.Enqueue(anthropictest.Text("Hello.", 5))
	cmd := exec.Command(node, filepath.Join(dir, "limit.mjs"), p.url, p.key, "default")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	var out struct {
		First   string
		Limited struct {
			Status, Attempts int
			Type, RetryAfter string
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.First != "Hello." || out.Limited.Status != 429 || out.Limited.Type != "rate_limit_error" || out.Limited.RetryAfter == "" {
		t.Errorf("%s", raw)
	}
	if out.Limited.Attempts != 1 {
		t.Errorf("the limited request was sent %d times: %s", out.Limited.Attempts, raw)
	}
}
