package agent_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// Events of a broken second round (after an echo tool round): the stream
// starts a message and then goes wrong.
const (
	bStart     = `{"type":"message_start","message":{"id":"msg_bad","type":"message","role":"assistant","model":"claude-sonnet-5-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`
	bTextStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`
	bTextDelta = `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Checking"}}`
	bStop0     = `{"type":"content_block_stop","index":0}`
	bToolStart = `{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_half","name":"echo","input":{}}}`
	bToolDelta = `{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":%q}}`
	bStop1     = `{"type":"content_block_stop","index":1}`
	bToolMD    = `{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":%s}}`
	bMsgStop   = `{"type":"message_stop"}`
)

func badEvents(evs ...string) anthropictest.Reply {
	var b strings.Builder
	for _, e := range evs {
		name := e[len(`{"type":"`):]
		name = name[:strings.IndexByte(name, '"')]
		fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, e)
	}
	parsed, err := anthropictest.ParseSSE(strings.NewReader(b.String()))
	if err != nil {
		panic(err)
	}
	return anthropictest.Reply{Events: parsed}
}

// TestStreamBadInputThroughRunner runs the upstream-stream table's failures
// through the Runner (issue 18): the model's first round calls a tool,
// the second round is broken — often mid tool_use, the case that could
// leave an unpaired tool_use behind. Each turn must end with one error
// event (or the deadline), the stored history must stay valid UTF-8 with
// every tool_use answered, and the next turn on the session must work:
// the fake validates the history it is sent, as the API would.
//
//	go test ./agent -run StreamBadInputThroughRunner -v
func TestStreamBadInputThroughRunner(t *testing.T) {
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	tool := func(input, outTokens string) []string {
		return []string{bStart, bTextStart, bTextDelta, bStop0, bToolStart, fmt.Sprintf(bToolDelta, input), bStop1,
			fmt.Sprintf(bToolMD, outTokens), bMsgStop}
	}
	type row struct {
		name  string
		reply anthropictest.Reply // the second round, through the fake; or
		ct    string              // a raw 200 answer with this content type
		body  string              //   and body
		code  string              // the error code wanted; "" wants the deadline
	}
	rows := []row{
		{name: "InvalidJSONInData", reply: badEvents(bStart, bTextStart, bTextDelta[:len(bTextDelta)-3]), code: coachd.EAPI},
		{name: "DeltaBeforeBlockStart", reply: badEvents(bStart, bTextDelta), code: coachd.EAPI},
		{name: "IndexOutOfOrder", reply: badEvents(bStart, bTextStart, strings.Replace(bTextDelta, `"index":0`, `"index":3`, 1)), code: coachd.EAPI},
		{name: "ToolInputInvalidJSON", reply: badEvents(tool(`{"text":`, "5")...), code: coachd.EAPI},
		{name: "ToolInputDeep", reply: badEvents(tool(`{"a":`+deep+`}`, "5")...), code: coachd.EAPI},
		{name: "ToolInputNotAnObject", reply: badEvents(tool(`"just a string"`, "5")...), code: coachd.EAPI},
		{name: "UsageNegative", reply: badEvents(tool(`{"text":"x"}`, "-5000")...), code: coachd.EAPI},
		{name: "UsageHuge", reply: badEvents(tool(`{"text":"x"}`, "9223372036854775807")...), code: coachd.EAPI},
		{name: "EndsMidToolUse", reply: badEvents(tool(`{"text":"x"}`, "5")[:6]...), code: coachd.EAPI},
		{name: "EndsWithoutMessageStop", reply: badEvents(tool(`{"text":"x"}`, "5")[:8]...), code: coachd.EAPI},
		{name: "ErrorEventMidToolUse", reply: badEvents(tool(`{"text":"x"}`, "5")...).ErrorAfter(6, "api_error", "Internal"), code: coachd.EAPI},
		{name: "OverloadedMidToolUse", reply: badEvents(tool(`{"text":"x"}`, "5")...).ErrorAfter(5, "overloaded_error", "Overloaded"), code: coachd.EUPSTREAMBUSY},
		{name: "CutMidToolUse", reply: badEvents(tool(`{"text":"x"}`, "5")...).DropAfter(6), code: coachd.EAPI},
		{name: "StallMidToolUse", reply: badEvents(tool(`{"text":"x"}`, "5")...).StallAfter(6), code: ""},
		{name: "LinePastSizeCap", ct: "text/event-stream", body: "event: message_start\ndata: " + bStart + "\n\nevent: ping\ndata: {\"type\":\"ping\",\"pad\":\"" +
			strings.Repeat("x", 33<<20) + "\"}\n\n", code: coachd.EAPI},
		{name: "WrongContentType", ct: "text/html", body: "<html>502 Bad Gateway</html>", code: coachd.EAPI},
		{name: "HTTP200JSONErrorBody", ct: "application/json", body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, code: coachd.EAPI},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			lim := agent.Limits{}
			if r.code == "" {
				lim.MaxDuration = 2 * time.Second
			}
			h := newHarness(t, lim)
			// Raw rows answer the second model call themselves; every other
			// call goes to the fake, which validates what it is sent.
			var calls atomic.Int64
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				if req.URL.Path == "/v1/messages" && calls.Add(1) == 2 && r.ct != "" {
					io.Copy(io.Discard, req.Body)
					w.Header().Set("Content-Type", r.ct)
					io.WriteString(w, r.body)
					return
				}
				h.fake.Handler().ServeHTTP(w, req)
			}))
			defer front.Close()
			ag := agent.DefaultAgent()
			ag.Tools = append(ag.Tools, "echo")
			ag.Limits = lim
			h.runner = h.newRunner(append(tools.Builtins(), echoTool), func(string) (*agent.Agent, bool) { return ag, true },
				func(c *agent.Config) {
					c.Model = anthropic.New(anthropic.Config{APIKey: "test", BaseURL: front.URL, MaxRetries: -1})
				})
			h.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Let me look.", 0), use("toolu_ok", "echo", `{"text":"a"}`)))
			if r.ct == "" {
				h.fake.Enqueue(r.reply)
			} else {
				h.fake.Enqueue(anthropictest.Text("never served", 0)) // the raw answer stands in for it
			}
			s := &sink{}
			start := time.Now()
			res := h.turn(agent.TurnRequest{Message: "look it up"}, s)
			if took := time.Since(start); took > 25*time.Second {
				t.Fatalf("the turn took %s", took)
			}
			if r.code == "" {
				if res.StopReason != coachd.TurnDeadline {
					t.Fatalf("stop %s err %v, want the deadline", res.StopReason, res.Err)
				}
			} else {
				if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != r.code {
					t.Fatalf("stop %s err %+v, want an error %s", res.StopReason, res.Err, r.code)
				}
				if errs := s.of(coachd.EventError); len(errs) != 1 || errs[0].Err.Code != r.code {
					t.Fatalf("error events %+v", errs)
				}
			}
			h.assertValidHistory(res.SessionID)
			// The charge is what was streamed, never a count the upstream
			// cannot have meant (negative: a credit; huge: the budget).
			if u, err := h.store.FindUserByID(context.Background(), h.user.ID); err != nil {
				t.Fatal(err)
			} else if u.TokensUsed <= 0 || u.TokensUsed > 100_000 {
				t.Fatalf("the failed turn charged %d tokens", u.TokensUsed)
			}
			// The broken round's call, whose card the client showed, is
			// kept (a reload shows it) but never run: it is answered
			// "interrupted", with an input the API takes.
			msgs := h.history(res.SessionID)
			for i, m := range msgs {
				if !utf8.ValidString(m.Content) {
					t.Fatalf("stored message %d is not valid UTF-8", m.Seq)
				}
				for _, b := range m.Blocks {
					if b.Type != coachd.BlockToolUse || b.ID != "toolu_half" {
						continue
					}
					if !m.Partial || !strings.HasPrefix(string(b.Input), "{") {
						t.Fatalf("the broken round's tool_use was stored as %+v in a reply partial=%v, want an object input in a partial reply", b, m.Partial)
					}
					if i+1 >= len(msgs) || len(msgs[i+1].Blocks) != 1 || msgs[i+1].Blocks[0].ToolUseID != "toolu_half" || msgs[i+1].Blocks[0].ResultText() != agent.InterruptedText {
						t.Fatalf("the broken round's tool_use is not answered interrupted: %+v", msgs[i+1:])
					}
				}
			}
			// The session goes on: the fake refuses an invalid history.
			h.fake.Enqueue(anthropictest.Text("Back again.", 0))
			res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "again"}, &sink{})
			if res2.StopReason != coachd.TurnEndTurn {
				t.Fatalf("next turn: %s %v", res2.StopReason, res2.Err)
			}
			h.assertValidHistory(res.SessionID)
		})
	}
}
