package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"testing"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// The oracle: the request as the SDK encoded it before coachd wrote its
// own body (sdkParams is the adapter's former params, kept here only to
// hold appendBody to it). Both paths run through a real SDK client whose
// middleware takes the body as it would go on the wire and stops there.

var errCaptured = errors.New("body captured")

// captureClient returns an SDK client that records each request body in
// *into and sends nothing.
func captureClient(into *[]byte, extra ...option.RequestOption) sdk.Client {
	opts := []option.RequestOption{option.WithAPIKey("k"), option.WithBaseURL("http://127.0.0.1:9/"), option.WithMaxRetries(0),
		option.WithMiddleware(func(r *http.Request, _ option.MiddlewareNext) (*http.Response, error) {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				return nil, err
			}
			*into = b
			return nil, errCaptured
		})}
	return sdk.NewClient(append(opts, extra...)...)
}

// sdkParams converts a request to SDK params the way the adapter did
// before body.go.
func sdkParams(m *Model, req *coachd.ModelRequest) (sdk.MessageNewParams, error) {
	var p sdk.MessageNewParams
	p.Model = sdk.Model(m.cfg.Model)
	if req.Model != "" {
		p.Model = sdk.Model(req.Model)
	}
	p.MaxTokens = req.MaxTokens
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultMaxTokens
	}
	markTool := false
	if !m.cfg.NoCache && !req.NoCache {
		req, markTool = coachd.CacheMarks(req)
	}
	for i, t := range req.Tools {
		raw, err := toolJSON(t)
		if err != nil {
			return p, err
		}
		if markTool && i == len(req.Tools)-1 {
			const cc = `,"cache_control":{"type":"ephemeral"}}`
			raw = append(raw[:len(raw)-1:len(raw)-1], cc...)
		}
		p.Tools = append(p.Tools, param.Override[sdk.ToolUnionParam](json.RawMessage(raw)))
	}
	if len(req.System) > 0 {
		p.System = make([]sdk.TextBlockParam, 0, len(req.System))
	}
	for i, b := range req.System {
		if b.Type == "" {
			return p, coachd.Errorf(coachd.EINVALID, "system block %d: coachd: block without type", i)
		}
		p.System = append(p.System, param.Override[sdk.TextBlockParam](b))
	}
	if len(req.Messages) > 0 {
		p.Messages = make([]sdk.MessageParam, 0, len(req.Messages))
	}
	for i, msg := range req.Messages {
		mp := sdk.MessageParam{Role: sdk.MessageParamRole(msg.Role)}
		if len(msg.Blocks) > 0 {
			mp.Content = make([]sdk.ContentBlockParamUnion, 0, len(msg.Blocks))
		}
		for j, b := range msg.Blocks {
			if b.Type == "" {
				return p, coachd.Errorf(coachd.EINVALID, "message %d block %d: coachd: block without type", i, j)
			}
			mp.Content = append(mp.Content, param.Override[sdk.ContentBlockParamUnion](b))
		}
		p.Messages = append(p.Messages, mp)
	}
	if tc := req.ToolChoice; tc != nil {
		raw, err := json.Marshal(tc)
		if err != nil {
			return p, coachd.Errorf(coachd.EINVALID, "tool_choice: %v", err)
		}
		p.ToolChoice = param.Override[sdk.ToolChoiceUnionParam](json.RawMessage(raw))
	}
	if req.ThinkingBudget > 0 {
		p.Thinking = sdk.ThinkingConfigParamOfEnabled(req.ThinkingBudget)
	}
	if req.Temperature != nil {
		p.Temperature = param.NewOpt(*req.Temperature)
	}
	if len(req.StopSequences) > 0 {
		p.StopSequences = req.StopSequences
	}
	if req.UserID != "" && m.platform != platformBedrock {
		p.Metadata = sdk.MetadataParam{UserID: param.NewOpt(req.UserID)}
	}
	return p, nil
}

// sdkCountParams is the former CountTokens' conversion.
func sdkCountParams(m *Model, req *coachd.ModelRequest) (sdk.MessageCountTokensParams, error) {
	plain := *req
	plain.NoCache = true
	p, err := sdkParams(m, &plain)
	if err != nil {
		return sdk.MessageCountTokensParams{}, err
	}
	c := sdk.MessageCountTokensParams{Model: p.Model, Messages: p.Messages, ToolChoice: p.ToolChoice, Thinking: p.Thinking}
	if len(p.System) > 0 {
		c.System = sdk.MessageCountTokensParamsSystemUnion{OfTextBlockArray: p.System}
	}
	for _, t := range req.Tools {
		raw, err := toolJSON(t)
		if err != nil {
			return c, err
		}
		c.Tools = append(c.Tools, param.Override[sdk.MessageCountTokensToolUnionParam](json.RawMessage(raw)))
	}
	return c, nil
}

// bodies returns the body the SDK sent for req the old way and the one the
// adapter sends now, for Stream (count false) or CountTokens; nil with
// the error where a path refused the request.
func bodies(tb testing.TB, cfg Config, platform string, req *coachd.ModelRequest, count bool) (old, now []byte, oldErr, nowErr error) {
	tb.Helper()
	ctx := context.Background()
	var oldBody, nowBody []byte
	ref := New(cfg)
	ref.platform = platform
	client := captureClient(&oldBody)
	m := New(cfg)
	m.platform = platform
	m.client = captureClient(&nowBody)
	if count {
		p, err := sdkCountParams(ref, req)
		if err == nil {
			_, err = client.Messages.CountTokens(ctx, p)
		}
		oldErr = err
		_, nowErr = m.CountTokens(ctx, req)
	} else {
		p, err := sdkParams(ref, req)
		if err == nil {
			s := client.Messages.NewStreaming(ctx, p)
			err = s.Err()
		}
		oldErr = err
		s := m.Stream(ctx, req)
		for s.Next() {
		}
		nowErr = s.Err()
	}
	if errors.Is(oldErr, errCaptured) {
		oldErr = nil
	}
	// The SDK appends its "stream" flag; coachd writes it first.
	if rest, ok := bytes.CutSuffix(oldBody, []byte(`,"stream":true}`)); ok {
		oldBody = append(append([]byte(`{"stream":true,`), rest[1:]...), '}')
	}
	if errors.Is(nowErr, errCaptured) {
		nowErr = nil
	}
	return oldBody, nowBody, oldErr, nowErr
}

// bodyCases cover every request feature and every block type, with raw
// JSON the SDK compacted and escaped (spaces, HTML characters, U+2028).
func bodyCases() map[string]*coachd.ModelRequest {
	temp := 0.7
	zero := 0.0
	tiny := 1e-7
	huge := 1e21
	in := json.RawMessage("{ \"q\" : \"<a & b>\u2028\",\n \"n\": [1, 2.50, -0] }")
	cached := coachd.TextBlock("cached\u2028 <b>")
	cached.Extra = map[string]json.RawMessage{"cache_control": json.RawMessage(`{ "type": "ephemeral" }`), "citations": json.RawMessage(`[ ]`)}
	img := coachd.Block{Type: coachd.BlockImage, Source: json.RawMessage(`{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}`)}
	doc := coachd.Block{Type: coachd.BlockDocument, Source: json.RawMessage(`{"type": "text", "media_type": "text/plain", "data": "a <doc>"}`),
		Extra: map[string]json.RawMessage{"title": json.RawMessage(`"T & C"`), "citations": json.RawMessage(`{"enabled":true}`)}}
	history := []coachd.ModelMessage{
		{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi\n\t\x01 \xff"), cached, img, doc}},
		{Role: coachd.RoleAssistant, Blocks: []coachd.Block{
			{Type: coachd.BlockThinking, Thinking: "hmm <x>", Signature: "sig"},
			{Type: coachd.BlockRedactedThinking, Data: "opaque"},
			coachd.TextBlock(""),
			{Type: coachd.BlockToolUse, ID: "toolu_1", Name: "n", Input: in},
			{Type: coachd.BlockToolUse, ID: "toolu_2", Name: "m"},
			{Type: "server_tool_use", Extra: map[string]json.RawMessage{"z": json.RawMessage(` 1 `), "a": in, "type": json.RawMessage(`"x"`)}}}},
		{Role: coachd.RoleUser, Blocks: []coachd.Block{
			{Type: coachd.BlockToolResult, ToolUseID: "toolu_1", Content: in, IsError: true},
			coachd.ToolResultBlock("toolu_2", "done & dusted", false),
			{Type: coachd.BlockToolResult, ToolUseID: "toolu_3", Content: json.RawMessage(`[{"type":"text","text":"a"},{"type":"image","source":{"type":"url","url":"https://x/y.png"}}]`)}}},
		{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("ok")}},
		{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("next"), coachd.TextBlock("time: now")}},
	}
	tools := []coachd.ToolSpec{
		{Name: "a", Description: "tool <a> & co", InputSchema: json.RawMessage(`{ "type": "object", "properties": {"x": {"type": "string"}} }`)},
		{Name: "b"},
		{Name: "c", Description: "c", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	return map[string]*coachd.ModelRequest{
		"Minimal": {MaxTokens: 100, Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("Hello")}}}},
		"Empty":   {},
		"EmptyMessages": {Messages: []coachd.ModelMessage{{Role: coachd.RoleUser}, {}, {Blocks: []coachd.Block{coachd.TextBlock("x")}}},
			NoCache: true},
		"Everything": {Model: "claude-x\u2028<", MaxTokens: 2048, ThinkingBudget: 1024, Temperature: &temp,
			StopSequences: []string{"END", "<stop>", ""}, UserID: "user_1 & <2>",
			System:     []coachd.Block{coachd.TextBlock("You are <a> coach & \"friend\"."), cached, coachd.TextBlock("ctx")},
			Tools:      tools,
			ToolChoice: &coachd.ToolChoice{Type: "tool", Name: "a<", DisableParallelToolUse: true},
			Messages:   history, TailBlocks: 1},
		"NoCache":         {MaxTokens: 10, System: []coachd.Block{coachd.TextBlock("s")}, Tools: tools, Messages: history, NoCache: true},
		"ToolsNoSystem":   {MaxTokens: 10, Tools: tools, Messages: history[:1], ToolChoice: &coachd.ToolChoice{Type: "auto"}},
		"TemperatureZero": {Temperature: &zero, Messages: history[:1]},
		"TemperatureTiny": {Temperature: &tiny, Messages: history[:1]},
		"TemperatureHuge": {Temperature: &huge, Messages: history[:1]},
	}
}

// TestBodyBytes: the body coachd writes is, byte for byte, the one the SDK
// wrote from the params before, for Stream and for CountTokens, on the
// Anthropic API and on Bedrock (no metadata).
func TestBodyBytes(t *testing.T) {
	for name, req := range bodyCases() {
		for _, v := range []struct {
			name     string
			cfg      Config
			platform string
			count    bool
		}{{"", Config{}, "", false}, {"Count", Config{}, "", true}, {"NoCacheConfig", Config{NoCache: true}, "", false},
			{"Bedrock", Config{Model: "anthropic.claude-x"}, platformBedrock, false}} {
			t.Run(name+v.name, func(t *testing.T) {
				old, now, oldErr, nowErr := bodies(t, v.cfg, v.platform, req, v.count)
				if oldErr != nil || nowErr != nil {
					t.Fatalf("errors: old %v, now %v", oldErr, nowErr)
				}
				if len(old) == 0 {
					t.Fatal("no body captured")
				}
				if !bytes.Equal(old, now) {
					t.Errorf("body\n got %s\nwant %s", now, old)
				}
			})
		}
	}
}

// TestBodyErrors: what the SDK could not encode is refused, as a coded
// error, before anything is sent.
func TestBodyErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(-1)
	user := func(b coachd.Block) []coachd.ModelMessage {
		return []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{b}}}
	}
	for name, req := range map[string]*coachd.ModelRequest{
		"UntypedBlock":      {Messages: user(coachd.Block{Text: "no type"})},
		"UntypedSystem":     {System: []coachd.Block{{Text: "no type"}}},
		"BadInput":          {Messages: user(coachd.Block{Type: coachd.BlockToolUse, ID: "t", Name: "n", Input: json.RawMessage(`{"a":`)})},
		"BadContent":        {Messages: user(coachd.Block{Type: coachd.BlockToolResult, ToolUseID: "t", Content: json.RawMessage(`nope`)})},
		"BadSource":         {Messages: user(coachd.Block{Type: coachd.BlockImage, Source: json.RawMessage(`{} {}`)})},
		"BadExtra":          {Messages: user(coachd.Block{Type: coachd.BlockText, Text: "x", Extra: map[string]json.RawMessage{"k": json.RawMessage(`[`)}})},
		"EmptyExtra":        {Messages: user(coachd.Block{Type: coachd.BlockText, Text: "x", Extra: map[string]json.RawMessage{"k": nil}})},
		"BadToolSchema":     {Tools: []coachd.ToolSpec{{Name: "t", InputSchema: json.RawMessage(`{`)}}},
		"TemperatureNaN":    {Temperature: &nan},
		"TemperatureNegInf": {Temperature: &inf},
	} {
		t.Run(name, func(t *testing.T) {
			_, now, oldErr, nowErr := bodies(t, Config{}, "", req, false)
			if oldErr == nil {
				t.Errorf("the SDK encoded it: the case tests nothing")
			}
			if coachd.ErrorCode(nowErr) != coachd.EINVALID || now != nil {
				t.Errorf("err = %v (sent %q), want EINVALID and nothing sent", nowErr, now)
			}
		})
	}
}

// TestBodySpans: the SDK's spans of a call say the same with coachd's body
// as with the SDK's encoding (model, max tokens, temperature, stop
// sequences, thinking), and with content recording on, the same system
// prompt and messages.
func TestBodySpans(t *testing.T) {
	for _, mode := range []string{"", "content"} {
		t.Run("Mode"+mode, func(t *testing.T) {
			t.Setenv("ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE", mode)
			req := bodyCases()["Everything"]
			spans := func(send func(sdk.Client)) map[attribute.Key]string {
				rec := tracetest.NewSpanRecorder()
				var body []byte
				send(captureClient(&body, option.WithTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))))
				ended := rec.Ended()
				if len(ended) != 1 {
					t.Fatalf("%d spans, want 1", len(ended))
				}
				out := map[attribute.Key]string{}
				for _, kv := range ended[0].Attributes() {
					out[kv.Key] = kv.Value.Emit()
				}
				return out
			}
			old := spans(func(c sdk.Client) {
				p, err := sdkParams(New(Config{}), req)
				if err != nil {
					t.Fatal(err)
				}
				c.Messages.NewStreaming(context.Background(), p)
			})
			now := spans(func(c sdk.Client) {
				m := New(Config{})
				m.client = c
				m.Stream(context.Background(), req)
			})
			if old["gen_ai.request.model"] == "" || (mode != "") != (old["gen_ai.input.messages"] != "") {
				t.Fatalf("the SDK's span lacks what the test compares: %v", old)
			}
			for k, v := range old {
				if now[k] != v {
					t.Errorf("%s = %q, want %q", k, now[k], v)
				}
			}
			if len(now) != len(old) {
				t.Errorf("attributes %v, want %v", now, old)
			}
		})
	}
}

// TestBodyCap: a body's buffer is sized from the last body, with room to
// grow, within bounds.
func TestBodyCap(t *testing.T) {
	var m Model
	for _, c := range []struct{ last, want int }{
		{0, minBodyCap}, {1000, minBodyCap}, {8000, 10000}, {900 << 10, maxBodyCap}, {5 << 20, maxBodyCap},
	} {
		m.lastBody.Store(int64(c.last))
		if got := m.bodyCap(&coachd.ModelRequest{}); got != c.want {
			t.Errorf("after a body of %d bytes: cap %d, want %d", c.last, got, c.want)
		}
	}
}
