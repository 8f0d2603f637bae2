package server_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The agent takes its tracer at init (otel.Tracer), and the global
// provider hands its tracers to the first provider set, once: a provider
// set by a second run (-count 2) would never see a span. So one provider
// is set for the process, and spans are sampled, and go to a recorder,
// only while a test records them; the other tests run untraced, as before
// any provider was set.
var tracing struct {
	once sync.Once
	rec  atomic.Pointer[tracetest.SpanRecorder] // nil: nobody records
}

// recordSpans records the process's spans until t ends.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	tracing.once.Do(func() {
		otel.SetTracerProvider(sdktrace.NewTracerProvider(
			sdktrace.WithSampler(whileRecording{}), sdktrace.WithSpanProcessor(toRecorder{})))
	})
	rec := tracetest.NewSpanRecorder()
	tracing.rec.Store(rec)
	t.Cleanup(func() { tracing.rec.Store(nil) })
	return rec
}

// whileRecording samples every span while a test records, none otherwise.
type whileRecording struct{}

func (whileRecording) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	d := sdktrace.Drop
	if tracing.rec.Load() != nil {
		d = sdktrace.RecordAndSample
	}
	return sdktrace.SamplingResult{Decision: d, Tracestate: trace.SpanContextFromContext(p.ParentContext).TraceState()}
}

func (whileRecording) Description() string { return "whileRecording" }

// toRecorder hands spans to the recording test's recorder.
type toRecorder struct{}

func (toRecorder) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) {
	if rec := tracing.rec.Load(); rec != nil {
		rec.OnStart(ctx, s)
	}
}

func (toRecorder) OnEnd(s sdktrace.ReadOnlySpan) {
	if rec := tracing.rec.Load(); rec != nil {
		rec.OnEnd(s)
	}
}

func (toRecorder) Shutdown(context.Context) error   { return nil }
func (toRecorder) ForceFlush(context.Context) error { return nil }

// TestTracing: a turn is an invoke_agent span with a chat span per model
// call and an execute_tool span per tool (GenAI conventions), inside the
// caller's trace (traceparent), which goes on to webhook tools.
func TestTracing(t *testing.T) {
	rec := recordSpans(t)

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
