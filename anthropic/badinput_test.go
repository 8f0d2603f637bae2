package anthropic_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/modeltest"
)

// Upstream streams, the events of one well-formed reply: "Hi" in one text
// block. Rows replace or insert events.
const (
	evStart      = `{"type":"message_start","message":{"id":"msg_bad","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	evTextStart  = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	evTextDelta  = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}`
	evStop0      = `{"type":"content_block_stop","index":0}`
	evMsgDelta   = `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":5}}`
	evMsgStop    = `{"type":"message_stop"}`
	evToolStart  = `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_bad","name":"lookup","input":{}}}`
	evToolDelta  = `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":%q}}`
	evToolMDelta = `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":5}}`
)

// sse writes events (each a data line, named after its "type") as a
// text/event-stream body.
func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		name := "message"
		if i := strings.Index(e, `"type":"`); i >= 0 {
			rest := e[i+8:]
			name = rest[:strings.IndexByte(rest, '"')]
		}
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, e)
	}
	return b.String()
}

func toEvents(events ...string) []anthropictest.Event {
	out := make([]anthropictest.Event, len(events))
	for i, e := range events {
		evs, err := anthropictest.ParseSSE(strings.NewReader(sse(e)))
		if err != nil || len(evs) != 1 {
			panic(fmt.Sprintf("event %q: %v", e, err))
		}
		out[i] = evs[0]
	}
	return out
}

// streamRow is one upstream answer and what the adapter must make of it:
// an error with code, or a message that check accepts.
type streamRow struct {
	name  string
	reply *anthropictest.Reply // through the fake; or
	ct    string               // a raw 200 answer with this content type
	body  string               //   and body
	code  string               // the coachd error code wanted; "" wants a message
	check func(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse)
}

func text(want string) func(*testing.T, []coachd.ModelEvent, *coachd.ModelResponse) {
	return func(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse) {
		t.Helper()
		if len(resp.Blocks) != 1 || resp.Blocks[0].Type != coachd.BlockText || resp.Blocks[0].Text != want {
			t.Fatalf("blocks = %+v, want one text block %q", resp.Blocks, want)
		}
		if resp.StopReason != "end_turn" {
			t.Fatalf("stop_reason = %q", resp.StopReason)
		}
	}
}

func anthropicStreamRows() []streamRow {
	events := func(evs ...string) *anthropictest.Reply { return &anthropictest.Reply{Events: toEvents(evs...)} }
	ok := []string{evStart, evTextStart, evTextDelta, evStop0, evMsgDelta, evMsgStop}
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	return []streamRow{
		{name: "WellFormed", reply: events(ok...), check: text("Hi")},
		{name: "UnknownEventType", reply: events(evStart, `{"type":"future_event","payload":{"x":1}}`, evTextStart, evTextDelta, evStop0, evMsgDelta, evMsgStop),
			check: text("Hi")},
		{name: "UnknownDeltaType", reply: events(evStart, evTextStart, `{"type":"content_block_delta","index":0,"delta":{"type":"future_delta","x":1}}`, evTextDelta, evStop0, evMsgDelta, evMsgStop),
			check: text("Hi")},
		{name: "UnknownFieldsEverywhere", reply: events(strings.Replace(evStart, `"role"`, `"new_field":[1,2],"role"`, 1), evTextStart,
			strings.Replace(evTextDelta, `"index"`, `"extra":{"a":null},"index"`, 1), evStop0, evMsgDelta, evMsgStop), check: text("Hi")},
		{name: "PingsAndComments", ct: "text/event-stream", body: ": hello\n\nevent: ping\ndata: {\"type\": \"ping\"}\n\n" + sse(ok...), check: text("Hi")},
		{name: "MalformedSSELines", ct: "text/event-stream", body: "garbage line without a colon\n\x00\xff\n:comment\n\n" + sse(ok...), check: text("Hi")},
		{name: "InvalidJSONInData", reply: events(evStart, evTextStart, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"`, evStop0, evMsgDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "TrailingGarbageInData", reply: events(evStart, evTextStart, evTextDelta+` trailing`, evStop0, evMsgDelta, evMsgStop), code: coachd.EAPI},
		{name: "DeltaBeforeBlockStart", reply: events(evStart, evTextDelta, evStop0, evMsgDelta, evMsgStop), code: coachd.EAPI},
		{name: "IndexOutOfOrder", reply: events(evStart, evTextStart, strings.Replace(evTextDelta, `"index":0`, `"index":5`, 1), evStop0, evMsgDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "NegativeIndex", reply: events(evStart, evTextStart, strings.Replace(evTextDelta, `"index":0`, `"index":-1`, 1), evStop0, evMsgDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "HugeIndex", reply: events(evStart, evTextStart, strings.Replace(evTextDelta, `"index":0`, `"index":99999999999999999999`, 1), evStop0, evMsgDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "ToolInputInvalidJSON", reply: events(evStart, evToolStart, fmt.Sprintf(evToolDelta, `{"zone":`), evStop0, evToolMDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "ToolInputDeep", reply: events(evStart, evToolStart, fmt.Sprintf(evToolDelta, `{"a":`+deep+`}`), evStop0, evToolMDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "ToolInputNotAnObjectLongID", reply: events(evStart, strings.Replace(evToolStart, "toolu_bad", "toolu_"+strings.Repeat("x", 1<<20), 1),
			fmt.Sprintf(evToolDelta, `[1,2]`), evStop0, evToolMDelta, evMsgStop), code: coachd.EAPI},
		{name: "ToolInputNotAnObject", reply: events(evStart, evToolStart, fmt.Sprintf(evToolDelta, `[1,2]`), evStop0, evToolMDelta, evMsgStop),
			code: coachd.EAPI},
		// The loop runs the calls of an end_turn reply too (a proxy's): its
		// cut input is refused as well.
		{name: "ToolInputInvalidEndTurn", reply: events(evStart, evToolStart, fmt.Sprintf(evToolDelta, `{"zone":`), evStop0, evMsgDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "InvalidUTF8InText", reply: events(evStart, evTextStart, strings.Replace(evTextDelta, `"Hi"`, "\"H\xff\xfei\"", 1), evStop0, evMsgDelta, evMsgStop),
			check: func(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse) {
				for _, e := range evs {
					if !utf8.ValidString(e.Text) {
						t.Fatalf("invalid UTF-8 in a delta: %q", e.Text)
					}
				}
				if len(resp.Blocks) != 1 || !utf8.ValidString(resp.Blocks[0].Text) || !strings.HasPrefix(resp.Blocks[0].Text, "H") {
					t.Fatalf("blocks = %+v", resp.Blocks)
				}
			}},
		{name: "NULInText", reply: events(evStart, evTextStart, strings.Replace(evTextDelta, `"Hi"`, `"H\u0000i"`, 1), evStop0, evMsgDelta, evMsgStop),
			check: text("H\x00i")}, // stored and sent JSON-escaped; the store swaps NUL in its text column
		{name: "UsageNegative", reply: events(evStart, evTextStart, evTextDelta, evStop0, strings.Replace(evMsgDelta, `"output_tokens":5`, `"output_tokens":-5000`, 1), evMsgStop),
			code: coachd.EAPI},
		{name: "UsageHuge", reply: events(evStart, evTextStart, evTextDelta, evStop0, strings.Replace(evMsgDelta, `"output_tokens":5`, `"output_tokens":9223372036854775807`, 1), evMsgStop),
			code: coachd.EAPI},
		{name: "UsageOverflow", reply: events(evStart, evTextStart, evTextDelta, evStop0, strings.Replace(evMsgDelta, `"output_tokens":5`, `"output_tokens":1e400`, 1), evMsgStop),
			code: coachd.EAPI},
		{name: "UsageInputNegative", reply: events(strings.Replace(evStart, `"input_tokens":10`, `"input_tokens":-10`, 1), evTextStart, evTextDelta, evStop0, evMsgDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "LinePastSizeCap", ct: "text/event-stream", body: sse(evStart, evTextStart) + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"" +
			strings.Repeat("x", 33<<20) + "\"}}\n\n" + sse(evStop0, evMsgDelta, evMsgStop), code: coachd.EAPI},
		{name: "EndsWithoutMessageStop", reply: events(evStart, evTextStart, evTextDelta, evStop0, evMsgDelta), code: coachd.EAPI},
		{name: "EndsMidBlock", reply: events(evStart, evTextStart, evTextDelta), code: coachd.EAPI},
		{name: "EmptyBody", ct: "text/event-stream", body: "", code: coachd.EAPI},
		{name: "SecondMessageStart", reply: events(evStart, evTextStart, strings.Replace(evStart, "msg_bad", "msg_other", 1), evTextDelta, evStop0, evMsgDelta, evMsgStop),
			code: coachd.EAPI},
		{name: "Stall", reply: &anthropictest.Reply{Events: toEvents(ok...), Fault: anthropictest.Fault{Kind: anthropictest.FaultStall, After: 3}},
			code: coachd.ETIMEOUT},
		{name: "ErrorEventOverloaded", reply: &anthropictest.Reply{Events: toEvents(ok...), Fault: anthropictest.Fault{Kind: anthropictest.FaultError, After: 2}},
			code: coachd.EUPSTREAMBUSY},
		{name: "ErrorEventAPI", reply: &anthropictest.Reply{Events: toEvents(ok...), Fault: anthropictest.Fault{Kind: anthropictest.FaultError, After: 3, ErrorType: "api_error", Message: "Internal"}},
			code: coachd.EAPI},
		{name: "CutConnection", reply: &anthropictest.Reply{Events: toEvents(ok...), Fault: anthropictest.Fault{Kind: anthropictest.FaultDrop, After: 3}},
			code: coachd.EAPI},
		{name: "WrongContentTypeHTML", ct: "text/html", body: "<html><body>502 Bad Gateway</body></html>", code: coachd.EAPI},
		{name: "WrongContentTypeBinary", ct: "application/octet-stream", body: "\x00\x01\x02\xff\xfe", code: coachd.EAPI},
		{name: "HTTP200JSONErrorBody", ct: "application/json", body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			code: coachd.EAPI},
		{name: "HTTP200JSONMessage", ct: "application/json", body: `{"id":"msg_x","type":"message","role":"assistant","content":[{"type":"text","text":"Hi"}],"model":"m","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`,
			code: coachd.EAPI},
	}
}

// TestStreamBadInput is the upstream-stream surface's bad-input table for
// the Anthropic adapter (issue 18): each malformed, hostile or broken
// answer from the Messages API becomes a classified error (a coachd error
// code) or a correct message, within a bound, never a panic or a hang;
// unknown event, delta and field types are ignored, as the API's
// versioning rules ask. The official SDK reads every answer over HTTP.
//
//	go test ./anthropic -run StreamBadInput -v
func TestStreamBadInput(t *testing.T) {
	fake := MustServer(t)
	for _, r := range anthropicStreamRows() {
		t.Run(r.name, func(t *testing.T) {
			base := fake.URL()
			if r.reply != nil {
				fake.Enqueue(*r.reply)
			} else {
				raw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					io.Copy(io.Discard, req.Body)
					w.Header().Set("Content-Type", r.ct)
					io.WriteString(w, r.body)
				}))
				defer raw.Close()
				base = raw.URL
			}
			m := anthropic.New(anthropic.Config{APIKey: "test-key", BaseURL: base, MaxRetries: -1})
			// A stall is cut by the caller's deadline; every other row must
			// end on its own, well before it (a 33 MiB line under -race
			// takes a few seconds).
			limit := 20 * time.Second
			if r.code == coachd.ETIMEOUT {
				limit = time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			start := time.Now()
			evs, resp, err := drain(m.Stream(ctx, hello()))
			if took := time.Since(start); took > limit+time.Second {
				t.Fatalf("took %s", took)
			}
			modeltest.CheckOutcome(t, r.code, r.check, evs, resp, err)
		})
	}
}
