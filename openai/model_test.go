package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// TestRequestMapping: system blocks become one system message, tool_use
// blocks tool_calls, tool results role "tool" messages (an error marked),
// images data URLs; tool_choice and parallel_tool_calls map; the key is
// a bearer token; usage is asked for.
func TestRequestMapping(t *testing.T) {
	srv := MustServer(t)
	srv.SetAPIKey("sk-test")
	m := newModel(srv, openai.Config{APIKey: "sk-test"})
	img := json.RawMessage(`{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}`)
	req := &coachd.ModelRequest{Model: "gpt-5.1", MaxTokens: 300, UserID: "usr_1",
		System: []coachd.Block{coachd.TextBlock("Be brief."), coachd.TextBlock("Use metric units.")},
		Messages: []coachd.ModelMessage{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("What is in this picture?"), {Type: coachd.BlockImage, Source: img}}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Looking."),
				{Type: coachd.BlockToolUse, ID: "call_1", Name: "echo", Input: json.RawMessage(`{"text":"a"}`)},
				{Type: coachd.BlockToolUse, ID: "call_2", Name: "echo", Input: json.RawMessage(`{"text":"b"}`)}}},
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.ToolResultBlock("call_1", "a", false),
				coachd.ToolResultBlock("call_2", "broke", true), coachd.TextBlock("and?")}},
		},
		Tools:      []coachd.ToolSpec{{Name: "echo", InputSchema: json.RawMessage(`{"type":"object"}`)}},
		ToolChoice: &coachd.ToolChoice{Type: "any", DisableParallelToolUse: true},
	}
	srv.Enqueue(openaitest.Text("A cat."))
	if _, _, err := modeltest.Drain(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	json.Unmarshal(srv.Requests()[0].Raw, &got)
	want := `{"max_tokens":300,"messages":[` +
		`{"content":"Be brief.\n\nUse metric units.","role":"system"},` +
		`{"content":[{"text":"What is in this picture?","type":"text"},{"image_url":{"url":"data:image/png;base64,iVBORw0KGgo="},"type":"image_url"}],"role":"user"},` +
		`{"content":"Looking.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"text\":\"a\"}","name":"echo"},"id":"call_1","type":"function"},{"function":{"arguments":"{\"text\":\"b\"}","name":"echo"},"id":"call_2","type":"function"}]},` +
		`{"content":"a","role":"tool","tool_call_id":"call_1"},` +
		`{"content":"Error: broke","role":"tool","tool_call_id":"call_2"},` +
		`{"content":"and?","role":"user"}],` +
		`"model":"gpt-5.1","parallel_tool_calls":false,"stream":true,"stream_options":{"include_usage":true},` +
		`"tool_choice":"required","tools":[{"function":{"name":"echo","parameters":{"type":"object"}},"type":"function"}],"user":"usr_1"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("request:\n got %s\nwant %s", b, want)
	}
}

// TestDegrade: thinking, cache breakpoints and documents are not sent,
// each logged once per model however many requests ask.
func TestDegrade(t *testing.T) {
	srv := MustServer(t)
	var logs bytes.Buffer
	m := newModel(srv, openai.Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	doc := coachd.Block{Type: coachd.BlockDocument, Source: json.RawMessage(`{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}`)}
	for range 3 {
		req := modeltest.Hello("gpt-5.1")
		req.ThinkingBudget = 2048
		req.Messages[0].Blocks = append(req.Messages[0].Blocks, doc)
		srv.Enqueue(openaitest.Text("ok"))
		if _, _, err := modeltest.Drain(m.Stream(context.Background(), req)); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"feature=thinking", "feature=cache_control", "feature=document"} {
		if n := strings.Count(logs.String(), f); n != 1 {
			t.Errorf("%s logged %d times, want 1:\n%s", f, n, logs.String())
		}
	}
	raw := string(srv.Requests()[0].Raw)
	if strings.Contains(raw, "thinking") || strings.Contains(raw, "JVBERi0") || !strings.Contains(raw, "cannot read documents") {
		t.Errorf("request carries what it cannot: %s", raw)
	}
}

// serveRaw serves each request with the next body, verbatim, as SSE.
func serveRaw(t *testing.T, bodies ...string) *openai.Model {
	var n atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, bodies[int(n.Add(1)-1)%len(bodies)])
	}))
	t.Cleanup(ts.Close)
	return openai.New(openai.Config{BaseURL: ts.URL, Model: "m", MaxRetries: -1})
}

// TestStreamShapes covers what servers other than OpenAI send.
func TestStreamShapes(t *testing.T) {
	t.Run("OllamaFinishStopWithCalls", func(t *testing.T) {
		// Whole call in one delta, no index, finish_reason "stop".
		m := serveRaw(t, `data: {"id":"c1","model":"llama3.1","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_x","function":{"name":"echo","arguments":"{\"text\":\"hi\"}"}}]},"finish_reason":null}]}`+"\n\n"+
			`data: {"id":"c1","model":"llama3.1","choices":[{"index":0,"delta":{"content":""},"finish_reason":"stop"}]}`+"\n\n"+
			`data: {"id":"c1","model":"llama3.1","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":5}}`+"\n\ndata: [DONE]\n\n")
		_, resp, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StopReason != coachd.StopToolUse || len(resp.Blocks) != 1 || resp.Blocks[0].ID != "call_x" ||
			string(resp.Blocks[0].Input) != `{"text":"hi"}` || resp.Usage != (coachd.Usage{InputTokens: 12, OutputTokens: 5}) {
			t.Errorf("response %+v", resp)
		}
	})
	t.Run("CallsByIDWithoutIndex", func(t *testing.T) {
		// The id repeated on every fragment, no index: two calls, not four.
		chunk := func(id, name, args string) string {
			return `data: {"id":"c5","choices":[{"index":0,"delta":{"tool_calls":[{"id":"` + id + `","function":{"name":"` + name + `","arguments":` + args + `}}]}}]}` + "\n\n"
		}
		m := serveRaw(t, chunk("a", "echo", `"{\"te"`)+chunk("a", "", `"xt\":1}"`)+chunk("b", "echo", `"{}"`)+
			`event: ping`+"\n\n"+`data: {"id":"c5","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n")
		_, resp, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		if err != nil || len(resp.Blocks) != 2 || string(resp.Blocks[0].Input) != `{"text":1}` || resp.Blocks[1].ID != "b" {
			t.Errorf("err %v, blocks %+v", err, resp.Blocks)
		}
	})
	t.Run("NoUsageNoDone", func(t *testing.T) {
		// A server ignoring include_usage, ending without [DONE]: charged by size.
		m := serveRaw(t, `data: {"id":"c2","choices":[{"index":0,"delta":{"content":"Hello world"},"finish_reason":"stop"}]}`+"\n\n")
		_, resp, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		if err != nil {
			t.Fatal(err)
		}
		if resp.StopReason != coachd.StopEndTurn || resp.Usage.OutputTokens != coachd.TokensOfBytes(11) || resp.Usage.InputTokens == 0 {
			t.Errorf("response %+v", resp)
		}
	})
	t.Run("CachedTokens", func(t *testing.T) {
		m := serveRaw(t, `data: {"id":"c3","choices":[{"index":0,"delta":{"content":"x"},"finish_reason":"stop"}]}`+"\n\n"+
			`data: {"id":"c3","choices":[],"usage":{"prompt_tokens":1000,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":800}}}`+"\n\n")
		_, resp, _ := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		if resp.Usage != (coachd.Usage{InputTokens: 200, OutputTokens: 3, CacheReadInputTokens: 800}) {
			t.Errorf("usage %+v", resp.Usage)
		}
	})
	t.Run("ErrCut", func(t *testing.T) {
		m := serveRaw(t, `data: {"id":"c4","choices":[{"index":0,"delta":{"content":"Half"},"finish_reason":null}]}`+"\n\n")
		_, resp, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		if coachd.ErrorCode(err) != coachd.EAPI || resp.Blocks[0].Text != "Half" || resp.Usage.OutputTokens != 1 {
			t.Errorf("err %v, response %+v", err, resp)
		}
	})
	t.Run("ErrLineTooLong", func(t *testing.T) {
		m := serveRaw(t, "data: "+strings.Repeat("x", 2<<20)+"\n\n")
		_, _, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		var ce *coachd.Error
		if !errors.As(err, &ce) || ce.Code != coachd.EAPI || !strings.Contains(ce.Message, "too long") {
			t.Errorf("err %v", err)
		}
	})
	t.Run("ErrMalformed", func(t *testing.T) {
		m := serveRaw(t, "data: {not json\n\n")
		if _, _, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello(""))); coachd.ErrorCode(err) != coachd.EAPI {
			t.Errorf("err %v", err)
		}
	})
	t.Run("ErrEventError", func(t *testing.T) {
		m := serveRaw(t, "event: error\ndata: {\"error\":{\"message\":\"Overloaded\",\"type\":\"overloaded_error\"}}\n\n")
		_, _, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("")))
		var ce *coachd.Error
		if !errors.As(err, &ce) || ce.Code != coachd.EUPSTREAMBUSY || !ce.Retryable {
			t.Errorf("err %v", err)
		}
	})
}

// TestErrors: statuses and bodies beyond the shared suite's.
func TestErrors(t *testing.T) {
	srv := MustServer(t)
	m := newModel(srv, openai.Config{})
	for _, tt := range []struct {
		reply     openaitest.Reply
		code      string
		retryable bool
	}{
		{openaitest.Status(429, nil, `{"error":{"message":"You exceeded your current quota","type":"insufficient_quota","code":"insufficient_quota"}}`), coachd.EAPI, false},
		{openaitest.Status(429, http.Header{"Retry-After": {"3"}}, ""), coachd.EUPSTREAMBUSY, true},
		{openaitest.Status(404, nil, ""), coachd.ENOTFOUND, false},
		{openaitest.Status(504, nil, "<html>gateway</html>"), coachd.ETIMEOUT, false},
		{openaitest.Text("partial").ErrorAfter(2, "rate_limit_exceeded", nil), coachd.EUPSTREAMBUSY, true},
		{openaitest.Text("partial").ErrorAfter(2, "BadRequestError", 400), coachd.EINVALID, false},
		{openaitest.Text("partial").ErrorAfter(2, "server_error", nil), coachd.EAPI, false},
		{openaitest.Text("partial").ErrorAfter(2, "RateLimitError", "429"), coachd.EUPSTREAMBUSY, true},
	} {
		srv.Enqueue(tt.reply)
		_, _, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("gpt-5.1")))
		var ce *coachd.Error
		if !errors.As(err, &ce) || ce.Code != tt.code || ce.Retryable != tt.retryable {
			t.Errorf("%+v: err %v, want %s retryable %v", tt.reply, err, tt.code, tt.retryable)
		}
		if tt.reply.Header != nil && ce.RetryAfter.Seconds() != 3 {
			t.Errorf("retry after %v", ce.RetryAfter)
		}
	}
}

// TestRetries: a busy answer is retried (after its Retry-After) before
// anything was read; a bad request is not.
func TestRetries(t *testing.T) {
	srv := MustServer(t)
	m := newModel(srv, openai.Config{MaxRetries: 2})
	srv.Enqueue(openaitest.Status(503, http.Header{"Retry-After-Ms": {"10"}}, ""), openaitest.Status(429, http.Header{"Retry-After-Ms": {"10"}}, ""), openaitest.Text("Third time."))
	_, resp, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("gpt-5.1")))
	if err != nil || resp.Blocks[0].Text != "Third time." || len(srv.Requests()) != 3 {
		t.Fatalf("err %v, %d requests", err, len(srv.Requests()))
	}
	srv.Enqueue(openaitest.Status(400, nil, ""))
	if _, _, err := modeltest.Drain(m.Stream(context.Background(), modeltest.Hello("gpt-5.1"))); coachd.ErrorCode(err) != coachd.EINVALID || len(srv.Requests()) != 4 {
		t.Fatalf("err %v, %d requests", err, len(srv.Requests()))
	}
}
