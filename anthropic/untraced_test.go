package anthropic_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"

	"github.com/anthropics/anthropic-sdk-go/option"
)

// TestUntracedSkipsSpan: with Config.Untraced, a call whose context holds
// no trace context and no baggage gets no SDK span and sends no trace
// headers; one that holds either keeps its span and its headers; without
// Untraced every call has its span. A recording provider stands where an
// untraced program has none, so a span made where it should not be shows.
func TestUntracedSkipsSpan(t *testing.T) {
	prevProp := otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTextMapPropagator(prevProp) })
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	srv := MustServer(t)

	parent, span := sdktrace.NewTracerProvider().Tracer("test").Start(context.Background(), "turn")
	defer span.End()
	member, err := baggage.NewMember("tenant", "t1")
	if err != nil {
		t.Fatal(err)
	}
	bag, err := baggage.New(member)
	if err != nil {
		t.Fatal(err)
	}
	withBaggage := baggage.ContextWithBaggage(context.Background(), bag)
	remote := trace.ContextWithRemoteSpanContext(context.Background(), span.SpanContext())

	for _, c := range []struct {
		name      string
		untraced  bool
		ctx       context.Context
		span      bool   // the SDK's span is made
		traceHdr  bool   // the request carries traceparent
		baggageIs string // the request's baggage header
	}{
		{"UntracedBare", true, context.Background(), false, false, ""},
		{"UntracedSpan", true, parent, true, true, ""},
		{"UntracedRemote", true, remote, true, true, ""},
		{"UntracedBaggage", true, withBaggage, true, true, "tenant=t1"},
		{"TracedBare", false, context.Background(), true, true, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			cfg := anthropic.Config{APIKey: "test-key", BaseURL: srv.URL(), MaxRetries: -1, Untraced: c.untraced}
			m := anthropic.NewWithClientOptions(cfg, option.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
			srv.Enqueue(anthropictest.Text("Hi.", 2))
			if _, resp, err := drain(m.Stream(c.ctx, hello())); err != nil || len(resp.Blocks) != 1 {
				t.Fatalf("stream: %v, %+v", err, resp)
			}
			if got := len(rec.Ended()); (got == 1) != c.span || got > 1 {
				t.Errorf("%d SDK spans, want a span: %v", got, c.span)
			}
			reqs := srv.Requests()
			h := reqs[len(reqs)-1].Header
			if got := h.Get("traceparent") != ""; got != c.traceHdr {
				t.Errorf("traceparent %q, want one: %v", h.Get("traceparent"), c.traceHdr)
			}
			if got := h.Get("baggage"); got != c.baggageIs {
				t.Errorf("baggage %q, want %q", got, c.baggageIs)
			}
		})
	}
}
