package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// sageRun is the chat state seed 002's handler ends with.
type sageRun struct {
	Status            int      `json:"status"`
	SessionID         string   `json:"session_id"`
	Message           string   `json:"message"`
	ToolCalls         int      `json:"toolCalls"`
	SuggestionPills   []string `json:"suggestionPills"`
	ShowCheckinPulse  bool     `json:"showCheckinPulse"`
	SessionCompleted  bool     `json:"sessionCompleted"`
	Error             *string  `json:"error"`
	Done              bool     `json:"done"`
	PendingToolResult *struct {
		ToolUseID string `json:"toolUseId"`
		Type      string `json:"type"`
	} `json:"pendingToolResult"`
}

// TestSeed002Client plays Sage's stream handling, under Node, against the
// real binary serving examples/sage.
func TestSeed002Client(t *testing.T) {
	node := needNode(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	const admin = "seed-admin-key-0123456789"
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", filepath.Join("..", "..", "examples", "sage"), "--demo",
		"--rate-limit", "off", "--admin-key", admin)
	chat := func(body string) sageRun {
		out, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed002-client.mjs"), p.url, p.key, body).Output()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		var r sageRun
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatalf("node output %s: %v", out, err)
		}
		return r
	}
	errIs := func(r sageRun, want string) bool { return r.Error != nil && strings.Contains(*r.Error, want) }

	t.Log("happy path, a tool between rounds")
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Let me save today's plan.", 6),
		anthropictest.ToolUse("toolu_s", "save_file", `{"file_type":"day-plan","file_name":"2026-11-23","content":"Run, then write."}`)),
		anthropictest.Text("Saved. One thing at a time.", 6))
	r := chat(`{"message":"plan my day"}`)
	if r.Status != 200 || !r.Done || r.Error != nil || r.ToolCalls != 1 || r.Message != "Let me save today's plan.\n\nSaved. One thing at a time." {
		t.Fatalf("happy: %+v", r)
	}
	sid := r.SessionID

	t.Log("options, answered")
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("When?", 0), anthropictest.ToolUse("toolu_o", "show_options", `{"options":["Morning","Evening"]}`)),
		anthropictest.Text("Morning it is.", 4))
	r = chat(fmt.Sprintf(`{"session_id":%q,"message":"when should I run?"}`, sid))
	if !r.Done || r.PendingToolResult == nil || r.PendingToolResult.Type != "options" || strings.Join(r.SuggestionPills, ",") != "Morning,Evening" {
		t.Fatalf("options: %+v", r)
	}
	r = chat(fmt.Sprintf(`{"session_id":%q,"tool_result":{"tool_use_id":%q,"content":"Morning"}}`, sid, r.PendingToolResult.ToolUseID))
	if r.Status != 200 || r.Message != "Morning it is." || r.Error != nil {
		t.Fatalf("answer: %+v", r)
	}

	t.Log("pulse check, answered with ratings")
	fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_p", "show_pulse_check", `{"context":"Your week","domains":["health"]}`)),
		anthropictest.Text("Health at 2: let's talk.", 4))
	r = chat(fmt.Sprintf(`{"session_id":%q,"message":"check in"}`, sid))
	if !r.ShowCheckinPulse || r.PendingToolResult == nil || r.PendingToolResult.Type != "pulse_check" {
		t.Fatalf("pulse: %+v", r)
	}
	r = chat(fmt.Sprintf(`{"session_id":%q,"tool_result":{"tool_use_id":%q,"content":{"ratings":[{"domain":"health","rating":2}]}}}`, sid, r.PendingToolResult.ToolUseID))
	if r.Status != 200 || r.Message != "Health at 2: let's talk." {
		t.Fatalf("pulse answer: %+v", r)
	}
	// The ratings are the baseline the next turn's context shows.
	fake.Enqueue(anthropictest.Text("Noted.", 4))
	chat(fmt.Sprintf(`{"session_id":%q,"message":"thanks"}`, sid))
	reqs := fake.Requests()
	if sys, _ := json.Marshal(reqs[len(reqs)-1].Body["system"]); !strings.Contains(string(sys), "health 2/5") {
		t.Fatalf("no pulse baseline in the next prompt: %.600s", sys)
	}

	t.Log("tool errors trip the breaker: the seed's message")
	for i := range 3 {
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_f%d", i), "save_file", `{"file_type":"domain","file_name":"health","content":"x"}`)))
	}
	r = chat(fmt.Sprintf(`{"session_id":%q,"message":"save my health domain"}`, sid))
	if !errIs(r, "Multiple tool executions failed. Please try again.") || !r.Done {
		t.Fatalf("breaker: %+v", r)
	}

	t.Log("the round limit: seed 002's MAX_TOOL_ITERATIONS")
	// "const MAX_TOOL_ITERATIONS = 5" (seed 002, line 224): five model
	// calls, each round closed by its roundBoundary, then the loop just
	// ends, without an error. A sixth call would get the fake's echo.
	for i := range 5 {
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_n%d", i), "list_notes", `{}`)))
	}
	before := len(fake.Requests())
	r = chat(fmt.Sprintf(`{"session_id":%q,"message":"look through everything"}`, sid))
	if r.Error != nil || !r.Done || r.ToolCalls != 5 || r.Message != strings.Repeat("\n\n", 5) || len(fake.Requests())-before != 5 {
		t.Fatalf("round limit: %+v, %d model calls", r, len(fake.Requests())-before)
	}

	t.Log("a mid-stream upstream error")
	fake.Enqueue(anthropictest.Text("A long thought that breaks off", 4).ErrorAfter(4, "overloaded_error", "Overloaded"))
	r = chat(fmt.Sprintf(`{"session_id":%q,"message":"and then?"}`, sid))
	if r.Error == nil || !r.Done || r.Message == "" {
		t.Fatalf("mid-stream: %+v", r)
	}

	t.Log("a pre-stream error: no budget")
	var me struct{ ID string }
	getJSON(t, p.url+"/v1/me", p.key, &me)
	req, _ := http.NewRequest("PATCH", p.url+"/v1/users/"+me.ID, strings.NewReader(`{"token_budget":1}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("patch: %v %v", resp, err)
	}
	before = len(fake.Requests())
	r = chat(fmt.Sprintf(`{"session_id":%q,"message":"hello?"}`, sid))
	if r.Status != 402 || !errIs(r, "budget") || !r.Done || len(fake.Requests()) != before {
		t.Fatalf("budget: %+v", r)
	}
}
