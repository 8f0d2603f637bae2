package openai_test

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
	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// Chat completion chunks of one well-formed reply, "Hi"; rows replace or
// insert chunks.
const (
	ckRole   = `{"id":"chatcmpl-bad","object":"chat.completion.chunk","model":"gpt-5.1","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`
	ckText   = `{"id":"chatcmpl-bad","object":"chat.completion.chunk","model":"gpt-5.1","choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}`
	ckStop   = `{"id":"chatcmpl-bad","object":"chat.completion.chunk","model":"gpt-5.1","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`
	ckUsage  = `{"id":"chatcmpl-bad","object":"chat.completion.chunk","model":"gpt-5.1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5}}`
	ckCall   = `{"id":"chatcmpl-bad","object":"chat.completion.chunk","model":"gpt-5.1","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"lookup","arguments":%q}}]},"finish_reason":null}]}`
	ckCalled = `{"id":"chatcmpl-bad","object":"chat.completion.chunk","model":"gpt-5.1","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`
)

func data(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		fmt.Fprintf(&b, "data: %s\n\n", c)
	}
	return b.String()
}

type streamRow struct {
	name  string
	reply *openaitest.Reply // through the fake; or
	ct    string            // a raw 200 answer with this content type
	body  string            //   and body
	code  string            // the coachd error code wanted; "" wants a message
	check func(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse)
}

func text(want string) func(*testing.T, []coachd.ModelEvent, *coachd.ModelResponse) {
	return func(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse) {
		t.Helper()
		if len(resp.Blocks) != 1 || resp.Blocks[0].Type != coachd.BlockText || resp.Blocks[0].Text != want {
			t.Fatalf("blocks = %+v, want one text block %q", resp.Blocks, want)
		}
		if resp.StopReason != coachd.StopEndTurn {
			t.Fatalf("stop_reason = %q", resp.StopReason)
		}
	}
}

// TestStreamBadInput is the upstream-stream surface's bad-input table for
// the OpenAI-compatible adapter (issue 18): each malformed, hostile or
// broken chat-completions stream becomes a classified error (a coachd
// error code) or a correct message, within a bound, never a panic or a
// hang; unknown fields and chunk kinds are ignored.
//
//	go test ./openai -run StreamBadInput -v
func TestStreamBadInput(t *testing.T) {
	const sse = "text/event-stream"
	ok := data(ckRole, ckText, ckStop, ckUsage) + "data: [DONE]\n\n"
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	replace := func(s, old, new string) string { return strings.Replace(s, old, new, 1) }
	rows := []streamRow{
		{name: "WellFormed", ct: sse, body: ok, check: text("Hi")},
		{name: "UnknownFieldsAndChunks", ct: sse, body: data(replace(ckRole, `"object"`, `"system_fingerprint":"x","future":{"a":[1]},"object"`),
			`{"id":"chatcmpl-bad","object":"chat.completion.future","choices":[]}`, ckText, ckStop, ckUsage) + "data: [DONE]\n\n", check: text("Hi")},
		{name: "UnknownEventNameAndComments", ct: sse, body: ": keep-alive\n\nevent: future\ndata: " + ckRole + "\n\n" + data(ckText, ckStop) + "data: [DONE]\n\n", check: text("Hi")},
		{name: "MalformedSSELines", ct: sse, body: "garbage line without a colon\n\x00\xff\nretry: abc\nid: \x00\n\n" + ok, check: text("Hi")},
		{name: "NoDoneMarker", ct: sse, body: data(ckRole, ckText, ckStop, ckUsage), check: text("Hi")},
		{name: "InvalidJSONInData", ct: sse, body: data(ckRole, `{"id":"chatcmpl-bad","choices":[{"index":0,"delta":{"content":"Hi"`, ckStop), code: coachd.EAPI},
		{name: "TrailingGarbageInData", ct: sse, body: data(ckRole, ckText+" trailing", ckStop), code: coachd.EAPI},
		{name: "DeepData", ct: sse, body: data(ckRole, `{"choices":`+deep+`}`, ckStop), code: coachd.EAPI},
		{name: "WrongTypes", ct: sse, body: data(ckRole, replace(ckText, `"content":"Hi"`, `"content":42`), ckStop), code: coachd.EAPI},
		{name: "OtherChoiceIndexIgnored", ct: sse, body: data(ckRole, replace(ckText, `"index":0`, `"index":7`), ckText, ckStop), check: text("Hi")},
		{name: "ToolCallIndexHuge", ct: sse, body: data(ckRole, replace(fmt.Sprintf(ckCall, `{"zone":"A"}`), `"index":0,"id"`, `"index":99999999999999999999,"id"`), ckCalled),
			code: coachd.EAPI},
		{name: "ToolCallWithoutName", ct: sse, body: data(ckRole, replace(fmt.Sprintf(ckCall, `{"zone":"A"}`), `"name":"lookup",`, ""), ckCalled), code: coachd.EAPI},
		{name: "ToolArgsInvalidJSON", ct: sse, body: data(ckRole, fmt.Sprintf(ckCall, `{"zone":`), ckCalled), code: coachd.EAPI},
		{name: "ToolArgsDeep", ct: sse, body: data(ckRole, fmt.Sprintf(ckCall, `{"a":`+deep+`}`), ckCalled), code: coachd.EAPI},
		{name: "ToolArgsNotAnObjectLongID", ct: sse, body: data(ckRole, strings.Replace(fmt.Sprintf(ckCall, `[1,2]`), "call_1", "call_"+strings.Repeat("x", 512<<10), 1), ckCalled),
			code: coachd.EAPI},
		{name: "ToolArgsNotAnObject", ct: sse, body: data(ckRole, fmt.Sprintf(ckCall, `[1,2]`), ckCalled), code: coachd.EAPI},
		{name: "ToolArgsCutByLength", ct: sse, body: data(ckRole, fmt.Sprintf(ckCall, `{"zone":`), replace(ckCalled, "tool_calls", "length")),
			check: func(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse) {
				if resp.StopReason != coachd.StopMaxTokens || len(resp.Blocks) != 1 || string(resp.Blocks[0].Input) != `{}` {
					t.Fatalf("a call cut by max_tokens: %+v", resp)
				}
			}},
		{name: "InvalidUTF8InText", ct: sse, body: data(ckRole, replace(ckText, `"Hi"`, "\"H\xff\xfei\""), ckStop), check: func(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse) {
			for _, e := range evs {
				if !utf8.ValidString(e.Text) {
					t.Fatalf("invalid UTF-8 in a delta: %q", e.Text)
				}
			}
			if len(resp.Blocks) != 1 || !utf8.ValidString(resp.Blocks[0].Text) {
				t.Fatalf("blocks = %+v", resp.Blocks)
			}
		}},
		{name: "NULInText", ct: sse, body: data(ckRole, replace(ckText, `"Hi"`, `"H\u0000i"`), ckStop), check: text("H\x00i")},
		{name: "UsageNegative", ct: sse, body: data(ckRole, ckText, ckStop, replace(ckUsage, `"completion_tokens":5`, `"completion_tokens":-5000`)), code: coachd.EAPI},
		{name: "UsageHuge", ct: sse, body: data(ckRole, ckText, ckStop, replace(ckUsage, `"prompt_tokens":10`, `"prompt_tokens":9223372036854775807`)), code: coachd.EAPI},
		{name: "UsageOverflow", ct: sse, body: data(ckRole, ckText, ckStop, replace(ckUsage, `"completion_tokens":5`, `"completion_tokens":1e400`)), code: coachd.EAPI},
		{name: "CachedAboveInput", ct: sse, body: data(ckRole, ckText, ckStop, replace(ckUsage, `"completion_tokens":5`, `"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":-7}`)),
			code: coachd.EAPI},
		{name: "LinePastSizeCap", ct: sse, body: data(ckRole) + "data: " + strings.Repeat("x", 2<<20) + "\n\n" + data(ckStop), code: coachd.EAPI},
		{name: "EventPastSizeCap", ct: sse, body: data(ckRole) + strings.Repeat("data: "+strings.Repeat("x", 512<<10)+"\n", 10) + "\n" + data(ckStop), code: coachd.EAPI},
		{name: "EndsWithoutFinishReason", ct: sse, body: data(ckRole, ckText) + "data: [DONE]\n\n", code: coachd.EAPI},
		{name: "EmptyBody", ct: sse, body: "", code: coachd.EAPI},
		{name: "ErrorEvent", ct: sse, body: data(ckRole) + "event: error\ndata: {\"error\":{\"message\":\"Overloaded\",\"type\":\"server_error\",\"code\":529}}\n\n", code: coachd.EUPSTREAMBUSY},
		{name: "ErrorEventGarbage", ct: sse, body: data(ckRole) + "event: error\ndata: \x00\xff not json\n\n", code: coachd.EAPI},
		{name: "WrongContentTypeHTML", ct: "text/html", body: "<html><body>502 Bad Gateway</body></html>", code: coachd.EAPI},
		{name: "WrongContentTypeBinary", ct: "application/octet-stream", body: "\x00\x01\x02\xff\xfe", code: coachd.EAPI},
		{name: "HTTP200JSONErrorBody", ct: "application/json", body: `{"error":{"message":"Rate limit reached","type":"rate_limit_error","code":"rate_limit_exceeded"}}`,
			code: coachd.EAPI},
		{name: "Stall", reply: ptr(openaitest.Text("Hello there").StallAfter(2)), code: coachd.ETIMEOUT},
		{name: "ErrorMidStream", reply: ptr(openaitest.Text("Hello there").ErrorAfter(2, "server_error", 503)), code: coachd.EUPSTREAMBUSY},
		{name: "CutConnection", reply: ptr(openaitest.Text("Hello there").DropAfter(2)), code: coachd.EAPI},
	}
	fake := MustServer(t)
	for _, r := range rows {
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
			m := openai.New(openai.Config{BaseURL: base, Model: "gpt-5.1", MaxRetries: -1})
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
			evs, resp, err := modeltest.Drain(m.Stream(ctx, modeltest.Hello("")))
			if took := time.Since(start); took > limit+time.Second {
				t.Fatalf("took %s", took)
			}
			modeltest.CheckOutcome(t, r.code, r.check, evs, resp, err)
		})
	}
}

func ptr[T any](v T) *T { return &v }
