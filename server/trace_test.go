package server_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTracing: a turn is an invoke_agent span with a chat span per model
// call and an execute_tool span per tool (GenAI conventions), inside the
// caller's trace (traceparent), which goes on to webhook tools.
func TestTracing(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(func() { otel.SetTracerProvider(prev) })

	var mu sync.Mutex
	var seen string
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = r.Header.Get("traceparent")
		mu.Unlock()
		w.Write([]byte(`{"zone":"airport"}`))
	}))
	defer app.Close()
	allow, _ := tools.ParseAddrPolicy("127.0.0.1/32")
	hook, err := tools.ParseWebhook("tools/lookup_zone.yaml", []byte("name: lookup_zone\ndescription: d\nurl: "+app.URL+"\n"), func(string) string { return "" }, allow)
	if err != nil {
		t.Fatal(err)
	}
	e := MustChatEnv(t, nil, hook)
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_z", "lookup_zone", `{}`)), anthropictest.Text("Airport.", 4))
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	r := e.do(request{method: "POST", path: "/v1/chat/stream", key: e.alice.key, body: `{"message":"where?"}`,
		header: map[string]string{"traceparent": "00-" + traceID + "-00f067aa0ba902b7-01"}})
	if r.status != 200 {
		t.Fatalf("chat %d %s", r.status, r.body)
	}
	spans := rec.Ended()
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans {
		byName[strings.Fields(s.Name())[0]] = append(byName[strings.Fields(s.Name())[0]], s)
		if s.SpanContext().TraceID().String() != traceID {
			t.Errorf("span %s is outside the caller's trace", s.Name())
		}
	}
	attr := func(s sdktrace.ReadOnlySpan, key string) attribute.Value {
		for _, kv := range s.Attributes() {
			if string(kv.Key) == key {
				return kv.Value
			}
		}
		return attribute.Value{}
	}
	turn := byName["invoke_agent"]
	if len(turn) != 1 || turn[0].Parent().SpanID().String() != "00f067aa0ba902b7" || attr(turn[0], "gen_ai.agent.name").AsString() != "default" ||
		attr(turn[0], "gen_ai.usage.output_tokens").AsInt64() == 0 {
		t.Fatalf("invoke_agent spans %v", turn)
	}
	chats := byName["chat"]
	if len(chats) != 2 || chats[0].Parent().SpanID() != turn[0].SpanContext().SpanID() || attr(chats[0], "gen_ai.usage.input_tokens").AsInt64() == 0 ||
		attr(chats[1], "gen_ai.response.finish_reasons").AsStringSlice()[0] != "end_turn" {
		t.Fatalf("chat spans %v", chats)
	}
	tool := byName["execute_tool"]
	if len(tool) != 1 || attr(tool[0], "gen_ai.tool.name").AsString() != "lookup_zone" || attr(tool[0], "gen_ai.tool.call.id").AsString() != "toolu_z" {
		t.Fatalf("execute_tool spans %v", tool)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(seen, traceID) || !strings.Contains(seen, tool[0].SpanContext().SpanID().String()) {
		t.Fatalf("the webhook got traceparent %q", seen)
	}
}
