package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

func fullRequest() *coachd.ModelRequest {
	temp := 0.5
	unknown := coachd.Block{Type: "server_tool_use", Extra: map[string]json.RawMessage{
		"id": json.RawMessage(`"srvtoolu_1"`), "name": json.RawMessage(`"web_search"`), "input": json.RawMessage(`{"q":"x"}`)}}
	cited := coachd.TextBlock("Paris is sunny.")
	cited.Extra = map[string]json.RawMessage{"citations": json.RawMessage(`[{"type":"char_location","cited_text":"x"}]`)}
	return &coachd.ModelRequest{
		Model: "claude-test", MaxTokens: 2048, ThinkingBudget: 1024, Temperature: &temp,
		StopSequences: []string{"END"}, UserID: "user_1",
		System: []coachd.Block{coachd.TextBlock("You are a coach."), coachd.TextBlock("Be brief.")},
		Tools: []coachd.ToolSpec{
			{Name: "a", Description: "tool a", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "b", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`)},
		},
		ToolChoice: &coachd.ToolChoice{Type: "auto", DisableParallelToolUse: true},
		Messages: []coachd.ModelMessage{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("Weather?")}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{
				{Type: coachd.BlockThinking, Thinking: "hmm", Signature: "sig"},
				{Type: coachd.BlockRedactedThinking, Data: "opaque"}, unknown, cited,
				{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "a", Input: json.RawMessage(`{}`)}}},
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("toolu_1", "done", true)}},
		},
	}
}

// TestRequest checks every request field on the wire, and the caching
// breakpoints (coachd.CacheMarks): the newest message's last block, the
// first system block (tools and the stable prompt), the third message from
// the end (the previous round's entry) and the last system block.
func TestRequest(t *testing.T) {
	want := `{"model":"claude-test","max_tokens":2048,"temperature":0.5,"stop_sequences":["END"],
	"metadata":{"user_id":"user_1"},"thinking":{"type":"enabled","budget_tokens":1024},
	"tool_choice":{"type":"auto","disable_parallel_tool_use":true},"stream":true,
	"system":[{"type":"text","text":"You are a coach.","cache_control":{"type":"ephemeral"}},{"type":"text","text":"Be brief.","cache_control":{"type":"ephemeral"}}],
	"tools":[{"name":"a","description":"tool a","input_schema":{"type":"object"}},
	  {"name":"b","input_schema":{"type":"object","properties":{"x":{"type":"string"}}}}],
	"messages":[{"role":"user","content":[{"type":"text","text":"Weather?","cache_control":{"type":"ephemeral"}}]},
	  {"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"sig"},{"type":"redacted_thinking","data":"opaque"},
	    {"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"q":"x"}},
	    {"type":"text","text":"Paris is sunny.","citations":[{"type":"char_location","cited_text":"x"}]},
	    {"type":"tool_use","id":"toolu_1","name":"a","input":{}}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"done","is_error":true,"cache_control":{"type":"ephemeral"}}]}]}`
	t.Run("OK", func(t *testing.T) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{})
		if _, _, err := drain(m.Stream(context.Background(), fullRequest())); err != nil {
			t.Fatal(err)
		}
		if got := srv.Requests()[0].Raw; !jsonEqual(t, got, []byte(want)) {
			t.Errorf("request:\n got %s\nwant %s", got, want)
		}
	})
	t.Run("NoCache", func(t *testing.T) {
		for _, cfg := range []struct {
			cfg anthropic.Config
			req bool
		}{{anthropic.Config{NoCache: true}, false}, {anthropic.Config{}, true}} {
			srv := MustServer(t)
			m := newModel(srv, cfg.cfg)
			req := fullRequest()
			req.NoCache = cfg.req
			if _, _, err := drain(m.Stream(context.Background(), req)); err != nil {
				t.Fatal(err)
			}
			if n := countCacheControl(srv.Requests()[0].Body); n != 0 {
				t.Errorf("%d cache_control markers, want 0", n)
			}
		}
	})
	t.Run("OKAtMostFour", func(t *testing.T) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{})
		req := fullRequest()
		for range 2 {
			b := coachd.TextBlock("earlier")
			b.Extra = map[string]json.RawMessage{"cache_control": json.RawMessage(`{"type":"ephemeral"}`)}
			req.Messages[0].Blocks = append(req.Messages[0].Blocks, b)
		}
		if _, _, err := drain(m.Stream(context.Background(), req)); err != nil {
			t.Fatal(err) // the fake rejects more than four, as the API does
		}
		if n := countCacheControl(srv.Requests()[0].Body); n != 4 {
			t.Errorf("%d cache_control markers, want 4", n)
		}
	})
	t.Run("DefaultModel", func(t *testing.T) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{})
		if _, _, err := drain(m.Stream(context.Background(), hello())); err != nil {
			t.Fatal(err)
		}
		if got := srv.Requests()[0].Model; got != anthropic.DefaultModel {
			t.Errorf("model = %q", got)
		}
	})
}

func countCacheControl(v any) int {
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "cache_control" {
				n++
			}
			n += countCacheControl(e)
		}
	case []any:
		for _, e := range x {
			n += countCacheControl(e)
		}
	}
	return n
}

// TestCacheUsage: the second turn of a conversation reads the prefix the
// first turn's breakpoint wrote.
func TestCacheUsage(t *testing.T) {
	srv := MustServer(t)
	m := newModel(srv, anthropic.Config{})
	srv.Enqueue(anthropictest.Text("first answer", 0), anthropictest.Text("second answer", 0))
	req := fullRequest()
	// The API caches nothing shorter than the model's minimum (1024
	// tokens for this model; the fake counts four bytes a token).
	req.System[0].Text = strings.Repeat("You are a coach. ", 300)
	_, first, err := drain(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	if first.Usage.CacheCreationInputTokens == 0 || first.Usage.CacheReadInputTokens != 0 {
		t.Errorf("first usage = %+v, want a cache write and no read", first.Usage)
	}
	req.Messages = append(req.Messages,
		coachd.ModelMessage{Role: coachd.RoleAssistant, Blocks: first.Blocks},
		coachd.ModelMessage{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("thanks")}})
	_, second, err := drain(m.Stream(context.Background(), req))
	if err != nil {
		t.Fatal(err)
	}
	if second.Usage.CacheReadInputTokens != first.Usage.CacheCreationInputTokens {
		t.Errorf("second read %d, want the %d written by the first", second.Usage.CacheReadInputTokens, first.Usage.CacheCreationInputTokens)
	}
}
