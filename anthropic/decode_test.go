package anthropic_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"

	"github.com/anthropics/anthropic-sdk-go/option"
)

// decodeCase is one upstream answer served to both decoders.
type decodeCase struct {
	name  string
	reply *anthropictest.Reply // through the fake; or a raw answer:
	ct    string
	body  string
	slow  bool // only for a case that waits out a deadline
}

// decodeCases are every recorded stream of the package, the scripted
// replies of the fake (text, tools, thinking, signatures, citations,
// faults) and the bad-input table's upstream answers.
func decodeCases(t *testing.T) []decodeCase {
	var cases []decodeCase
	files, _ := filepath.Glob(filepath.Join(fixturesDir(t), "*.sse"))
	for _, f := range files {
		r := anthropictest.ReplayFile(f)
		cases = append(cases, decodeCase{name: "fixture/" + filepath.Base(f), reply: &r})
	}
	if out, err := sdkDirOK(); err == nil {
		cs, _ := filepath.Glob(filepath.Join(out, "cassettes", "*.yaml"))
		for _, f := range cs {
			its, err := anthropictest.LoadCassette(f)
			if err != nil {
				t.Fatal(err)
			}
			for i := range its {
				cases = append(cases, decodeCase{name: fmt.Sprintf("cassette/%s/%d", filepath.Base(f), i), reply: &its[i].Reply})
			}
		}
	}
	reply := func(name string, r anthropictest.Reply) {
		r.ID = "msg_script" // both runs see the same message
		cases = append(cases, decodeCase{name: "script/" + name, reply: &r})
	}
	tool := anthropictest.ToolUse("toolu_1", "save_note", `{"text":"buy milk \"now\"","tags":["a","b"],"n":1.5e3}`, 3, 9, 20)
	reply("text", anthropictest.Text("Hello there, how are you today? Fine — thanks ☕ 🎉.\n\tTab\\slash \"quoted\"", 3))
	reply("text_padded", anthropictest.Text(strings.Repeat("word ", 60), 4).Padded())
	reply("text_one_delta", anthropictest.Text("one delta", 0))
	reply("text_gzipped", anthropictest.Text("compressed on the wire", 2).Gzipped())
	reply("tool", anthropictest.Blocks(anthropictest.TextBlock("Saving.", 2), tool))
	reply("tool_padded", anthropictest.Blocks(tool).Padded())
	reply("two_tools", anthropictest.Blocks(tool, anthropictest.ToolUse("toolu_2", "list_notes", `{}`)))
	reply("thinking", anthropictest.Blocks(anthropictest.Thinking("Let me think: 2+2=4.\nYes.", "c2lnbmF0dXJl+/=="), anthropictest.TextBlock("Four.", 1)))
	reply("redacted", anthropictest.Blocks(anthropictest.Redacted("cmVkYWN0ZWQ="), anthropictest.TextBlock("Done", 0)))
	reply("raw_block", anthropictest.Blocks(anthropictest.BlockSpec{Type: "server_tool_use", Raw: []byte(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"x"}}`)}, anthropictest.TextBlock("ok", 0)))
	reply("max_tokens", anthropictest.Text("cut", 1).WithStop("max_tokens"))
	reply("stop_sequence", anthropictest.Text("halt", 2).WithStop("stop_sequence"))
	reply("error_after_2", anthropictest.Text("Hello there", 1).ErrorAfter(2, "overloaded_error", "Overloaded"))
	reply("error_after_5_api", anthropictest.Text("Hello there", 1).ErrorAfter(5, "api_error", "Internal"))
	reply("drop_after_4", anthropictest.Text("Hello there", 1).DropAfter(4))
	reply("status_529", anthropictest.Status(529, nil, ""))
	reply("status_400", anthropictest.Status(400, nil, ""))
	events := func(name string, evs ...string) {
		cases = append(cases, decodeCase{name: "events/" + name, reply: &anthropictest.Reply{Events: toEvents(evs...)}})
	}
	events("citations", evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":"","citations":[]}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"The sky is blue"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location","cited_text":"blue","document_index":0,"document_title":"Sky","start_char_index":0,"end_char_index":4}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"."}}`,
		evStop0, evMsgDelta, evMsgStop)
	events("duplicate_message_start", evStart, evTextStart, evStart, evTextDelta, evStop0, evMsgDelta, evMsgStop)
	events("escapes_and_surrogates", evStart, evTextStart,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\u00e9\n\u2019\/\b\f\r\t\\\""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d\ude00 \ud83d lone"}}`,
		`{ "index" : 0 , "delta" : { "text" : "spaced" , "type" : "text_delta" } , "type" : "content_block_delta" }`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","text":"twice"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","thinking":"wrong key"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":null}}`,
		`{"type":"content_block_delta","index":0.0,"delta":{"type":"text_delta","text":"float index"}}`,
		`{"type":"content_block_stop","index":0,"delta":{}}`, evMsgDelta, evMsgStop)
	events("message_delta_shapes", evStart, evTextStart, evTextDelta, evStop0,
		`{"type":"message_delta","delta":{"stop_reason":"future_reason","stop_sequence":"\u00e9nd","stop_details":null},"usage":{"input_tokens":7,"cache_read_input_tokens":3,"output_tokens":9,"server_tool_use":null,"output_tokens_details":null}}`,
		`{"type":"message_delta","delta":{"stop_reason":null,"stop_sequence":null},"usage":{"output_tokens":2,"output_tokens":3}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":4,"server_tool_use":{"web_search_requests":1}}}`,
		`{"type":"message_delta","delta":{"stop_reason":"end_turn","container":{"id":"c","expires_at":"2026-01-01T00:00:00Z"}},"usage":{"cache_creation_input_tokens":5}}`,
		evMsgStop)
	events("non_json_tool_input", evStart, evToolStart, fmt.Sprintf(evToolDelta, `{"zone":`), evStop0, evToolMDelta, evMsgStop)
	events("signature_and_thinking_keys", evStart,
		`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"hmm"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig"}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"\u0041"}}`,
		evStop0, evMsgDelta, evMsgStop)
	for _, r := range anthropicStreamRows() {
		cases = append(cases, decodeCase{name: "badinput/" + r.name, reply: r.reply, ct: r.ct, body: r.body,
			slow: r.code == coachd.ETIMEOUT})
	}
	return cases
}

// sdkDirOK is sdkDir, or an error when the SDK module is not at hand.
func sdkDirOK() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/anthropics/anthropic-sdk-go").Output()
	dir := strings.TrimSpace(string(out))
	if err != nil || dir == "" {
		return "", fmt.Errorf("SDK module dir not found: %v", err)
	}
	return filepath.Join(dir, "toolrunner", "testdata"), nil
}

// TestDecodeSame serves every answer of decodeCases to the adapter twice,
// once decoding the events itself and once through the SDK's decoder, and
// wants the same events, the same response and the same error.
func TestDecodeSame(t *testing.T) {
	srv := MustServer(t)
	for _, c := range decodeCases(t) {
		t.Run(c.name, func(t *testing.T) {
			if c.slow && testing.Short() {
				t.Skip("waits out a deadline")
			}
			base := srv.URL()
			if c.reply == nil {
				raw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					io.Copy(io.Discard, req.Body)
					w.Header().Set("Content-Type", c.ct)
					io.WriteString(w, c.body)
				}))
				defer raw.Close()
				base = raw.URL
			}
			run := func(sdkDecode bool) (decoded, bool) {
				m := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: base, MaxRetries: -1})
				anthropic.SetSDKDecode(m, sdkDecode)
				if c.reply != nil {
					srv.Enqueue(*c.reply)
				}
				limit := 20 * time.Second
				if c.slow {
					limit = 300 * time.Millisecond
				}
				ctx, cancel := context.WithTimeout(context.Background(), limit)
				defer cancel()
				s := m.Stream(ctx, hello())
				fast := anthropic.FastDecode(s)
				evs, resp, err := drain(s)
				return decoded{evs, resp, err}, fast
			}
			slow, usedFast := run(true)
			if usedFast {
				t.Fatal("SetSDKDecode: the adapter decoded the events itself")
			}
			fast, usedFast := run(false)
			sse := c.reply != nil && c.reply.Status == 0 || strings.HasPrefix(c.ct, "text/event-stream")
			if usedFast != sse {
				t.Fatalf("fast path used = %v, want %v", usedFast, sse)
			}
			sameDecoded(t, fast, slow)
		})
	}
}

type decoded struct {
	evs  []coachd.ModelEvent
	resp *coachd.ModelResponse
	err  error
}

// sameDecoded fails t unless the fast path's outcome is the SDK path's.
func sameDecoded(t *testing.T, fast, slow decoded) {
	t.Helper()
	if !reflect.DeepEqual(fast.evs, slow.evs) {
		t.Errorf("events differ:\nfast %+v\n sdk %+v", fast.evs, slow.evs)
	}
	if !reflect.DeepEqual(fast.resp, slow.resp) {
		t.Errorf("response differs:\nfast %+v\n sdk %+v", fast.resp, slow.resp)
	}
	if (fast.err == nil) != (slow.err == nil) {
		t.Fatalf("err: fast %v, sdk %v", fast.err, slow.err)
	}
	if fast.err == nil {
		return
	}
	var fe, se *coachd.Error
	if !errors.As(fast.err, &fe) || !errors.As(slow.err, &se) {
		t.Fatalf("err not a *coachd.Error: fast %T, sdk %T", fast.err, slow.err)
	}
	if fe.Code != se.Code || fe.Message != se.Message || fe.Retryable != se.Retryable || fe.RetryAfter != se.RetryAfter {
		t.Errorf("err: fast %s %q %v, sdk %s %q %v", fe.Code, fe.Message, fe.Retryable, se.Code, se.Message, se.Retryable)
	}
	// The fake numbers its requests; the two runs are two requests.
	reqID := regexp.MustCompile(`req_fake_[0-9]+`)
	if reqID.ReplaceAllString(fast.err.Error(), "req") != reqID.ReplaceAllString(slow.err.Error(), "req") {
		t.Errorf("err text:\nfast %s\n sdk %s", fast.err, slow.err)
	}
}

// TestDecodeTracedUsesSDK: with a tracer provider whose spans record, the
// SDK decodes the events (its span follows them) and the span ends with
// the stream; with one that samples nothing, coachd decodes them and the
// request still carries the trace context.
func TestDecodeTracedUsesSDK(t *testing.T) {
	// The SDK injects the trace context with the global propagator. (A
	// global cannot be put back as it was: the restored default delegates
	// to the first one set, TraceContext, which only acts on a context
	// that has a span.)
	prevProp := otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTextMapPropagator(prevProp) })
	otel.SetTextMapPropagator(propagation.TraceContext{})
	srv := MustServer(t)
	cfg := anthropic.Config{APIKey: "test-key", BaseURL: srv.URL(), MaxRetries: -1}
	reply := anthropictest.Blocks(anthropictest.TextBlock("Saving.", 2),
		anthropictest.ToolUse("toolu_1", "save_note", `{"text":"milk"}`, 4))
	reply.ID = "msg_traced"

	rec := tracetest.NewSpanRecorder()
	m := anthropic.NewWithClientOptions(cfg, option.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	srv.Enqueue(reply)
	s := m.Stream(context.Background(), hello())
	if anthropic.FastDecode(s) {
		t.Fatal("a recorded span: the adapter decoded the events itself")
	}
	traced, resp, err := drain(s)
	if err != nil || len(resp.Blocks) != 2 {
		t.Fatalf("traced: %v, %+v", err, resp)
	}
	var names []string
	for _, sp := range rec.Ended() {
		names = append(names, sp.Name())
	}
	if len(names) != 1 || names[0] != "anthropic.messages.create" {
		t.Fatalf("ended spans = %q, want the SDK's anthropic.messages.create", names)
	}

	never := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	m = anthropic.NewWithClientOptions(cfg, option.WithTracerProvider(never))
	ctx, span := never.Tracer("test").Start(context.Background(), "chat")
	defer span.End()
	srv.Enqueue(reply)
	s = m.Stream(ctx, hello())
	if !anthropic.FastDecode(s) {
		t.Fatal("an unsampled span: the SDK decoded the events")
	}
	evs, resp2, err := drain(s)
	sameDecoded(t, decoded{evs, resp2, err}, decoded{traced, resp, nil})
	reqs := srv.Requests()
	if tp := reqs[len(reqs)-1].Header.Get("traceparent"); !strings.HasSuffix(tp, "-00") {
		t.Errorf("traceparent = %q, want the unsampled span's", tp)
	}
}
