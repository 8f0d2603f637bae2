package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestServeTracing runs a turn through the binary with tracing on (an
// OTLP endpoint) and off. On, the Anthropic SDK's span of the model call
// is exported beside coachd's, and the upstream request carries its trace
// context. Off, the SDK's span is skipped (anthropic.Config.Untraced):
// the upstream request carries no trace context of its own, and still
// carries the one a client sent.
func TestServeTracing(t *testing.T) {
	fake := anthropictest.New()
	defer fake.Close()
	up := httptest.NewServer(fake.Handler())
	defer up.Close()

	spans := make(chan string, 64)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		var req coltrace.ExportTraceServiceRequest
		if err != nil || proto.Unmarshal(body, &req) != nil {
			http.Error(w, "bad export", http.StatusBadRequest)
			return
		}
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					select {
					case spans <- sp.Name:
					default:
					}
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		b, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
		w.Write(b)
	}))
	defer collector.Close()

	const admin = "trace-admin-key-0123456789"
	// turn runs one chat turn with the given traceparent ("" for none)
	// and returns the traceparent of the model call it made upstream.
	turn := func(t *testing.T, url, traceparent string) string {
		t.Helper()
		keys, err := benchUsers(context.Background(), url, admin, 1)
		if err != nil {
			t.Fatal(err)
		}
		fake.Enqueue(anthropictest.Text("Hello there.", 2))
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/stream", strings.NewReader(`{"message":"hi"}`))
		req.Header.Set("Authorization", "Bearer "+keys[0])
		req.Header.Set("Content-Type", "application/json")
		if traceparent != "" {
			req.Header.Set("traceparent", traceparent)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "message_end") {
			t.Fatalf("chat: %d %s", resp.StatusCode, body)
		}
		reqs := fake.Requests()
		return reqs[len(reqs)-1].Header.Get("traceparent")
	}
	const clientTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	env := []string{"ANTHROPIC_BASE_URL=" + up.URL, "ANTHROPIC_API_KEY=test", "COACHD_LOG_LEVEL=warn"}

	t.Run("On", func(t *testing.T) {
		p := MustStart(t, append(env, "COACHD_OTLP_ENDPOINT="+collector.URL, "OTEL_BSP_SCHEDULE_DELAY=20"),
			"--db", t.TempDir()+"/c.db", "--admin-key", admin)
		if tp := turn(t, p.url, ""); tp == "" {
			t.Error("tracing on: the model call carried no trace context")
		}
		seen := map[string]bool{}
		deadline := time.After(20 * time.Second)
		for !seen["anthropic.messages.create"] || !seen["invoke_agent default"] {
			select {
			case name := <-spans:
				seen[name] = true
			case <-deadline:
				t.Fatalf("spans exported: %v; want the SDK's anthropic.messages.create and coachd's invoke_agent default", seen)
			}
		}
	})
	t.Run("Off", func(t *testing.T) {
		p := MustStart(t, env, "--db", t.TempDir()+"/c.db", "--admin-key", admin)
		if tp := turn(t, p.url, ""); tp != "" {
			t.Errorf("tracing off: the model call carried traceparent %q", tp)
		}
		if tp := turn(t, p.url, clientTrace); !strings.HasPrefix(tp, "00-4bf92f3577b34da6a3ce929d0e0e4736-") {
			t.Errorf("tracing off: the model call carried traceparent %q, want the client's trace", tp)
		}
	})
}
