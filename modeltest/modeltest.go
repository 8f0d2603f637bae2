// Package modeltest is the conformance suite every coachd.Model adapter
// runs against a fake of its own wire: the same scripted conversations
// (a text turn, a tool round, two parallel calls, max_tokens, error
// classification, cancellation), first through the bare ModelStream, then
// through a real agent.Runner over a real SQLite store.
package modeltest

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/sqlstore"
)

// Call is a scripted tool call; Input is its JSON object.
type Call struct{ ID, Name, Input string }

// Script is one scripted upstream answer, in provider-neutral terms. A
// Backend translates it into its wire.
type Script struct {
	Text  string
	Calls []Call
	// MaxTokens ends the reply with the provider's max-tokens stop.
	MaxTokens bool
	// Status answers with an HTTP error of that status (429, 503, 500,
	// 401, 400) in the provider's error body instead of a reply.
	Status int
	// BusyAfterText streams Text, then an in-stream "overloaded" error.
	BusyAfterText bool
	// Stall streams Text, then nothing until the client goes away.
	Stall bool
}

// Backend is a provider's fake wire and the adapter pointed at it.
type Backend interface {
	// Model is the adapter under test, talking to the fake, with retries
	// off.
	Model() coachd.Model
	// ModelNames are two model ids the fake serves: an agent's model and
	// its fallback_model.
	ModelNames() (primary, fallback string)
	// Enqueue scripts the next answers, one per request.
	Enqueue(s ...Script)
	// Requests is how many requests the fake received.
	Requests() int
	// LastModel is the model the last request named.
	LastModel() string
	// LastToolResults are the tool results the last request carried,
	// keyed by tool call id, as the result text.
	LastToolResults() map[string]string
}

// Run runs the suite. newBackend starts a fresh fake for each subtest.
func Run(t *testing.T, newBackend func(t *testing.T) Backend) {
	t.Run("Text", func(t *testing.T) { testText(t, newBackend(t)) })
	t.Run("ToolCall", func(t *testing.T) { testToolCall(t, newBackend(t)) })
	t.Run("ParallelCalls", func(t *testing.T) { testParallel(t, newBackend(t)) })
	t.Run("MaxTokens", func(t *testing.T) { testMaxTokens(t, newBackend(t)) })
	t.Run("Errors", func(t *testing.T) { testErrors(t, newBackend(t)) })
	t.Run("BusyMidStream", func(t *testing.T) { testBusyMidStream(t, newBackend(t)) })
	t.Run("Cancel", func(t *testing.T) { testCancel(t, newBackend(t)) })
	t.Run("RunnerToolRound", func(t *testing.T) { testRunnerToolRound(t, newBackend(t)) })
	t.Run("RunnerFallback", func(t *testing.T) { testRunnerFallback(t, newBackend(t)) })
}

// Drain reads a stream to its end.
func Drain(s coachd.ModelStream) ([]coachd.ModelEvent, *coachd.ModelResponse, error) {
	defer s.Close()
	var evs []coachd.ModelEvent
	for s.Next() {
		evs = append(evs, s.Event())
	}
	return evs, s.Response(), s.Err()
}

// Hello is a one-message request.
func Hello(model string) *coachd.ModelRequest {
	return &coachd.ModelRequest{Model: model, MaxTokens: 1024, UserID: "usr_conformance",
		System:   []coachd.Block{coachd.TextBlock("You are terse.")},
		Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("Hello")}}},
		Tools: []coachd.ToolSpec{{Name: "echo", Description: "echoes",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)}}}
}

func stream(t *testing.T, b Backend) ([]coachd.ModelEvent, *coachd.ModelResponse, error) {
	t.Helper()
	primary, _ := b.ModelNames()
	return Drain(b.Model().Stream(context.Background(), Hello(primary)))
}

func testText(t *testing.T, b Backend) {
	const text = "Hello there, how can I help today?"
	b.Enqueue(Script{Text: text})
	evs, resp, err := stream(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if got := deltas(evs, coachd.ModelTextDelta, 0); got != text {
		t.Errorf("text deltas = %q, want %q", got, text)
	}
	if len(resp.Blocks) != 1 || resp.Blocks[0].Type != coachd.BlockText || resp.Blocks[0].Text != text {
		t.Fatalf("blocks = %+v", resp.Blocks)
	}
	if resp.StopReason != coachd.StopEndTurn {
		t.Errorf("stop = %q, want end_turn", resp.StopReason)
	}
	if resp.Usage.InputTokens <= 0 || resp.Usage.OutputTokens <= 0 {
		t.Errorf("usage = %+v, want input and output counted", resp.Usage)
	}
	last := evs[len(evs)-1]
	if last.Type != coachd.ModelMessageDelta || last.StopReason != coachd.StopEndTurn || last.Usage != resp.Usage {
		t.Errorf("last event = %+v, want message_delta with the final usage %+v", last, resp.Usage)
	}
}

func testToolCall(t *testing.T, b Backend) {
	in := `{"text":"split across many chunks, with \"quotes\" and ünïcode"}`
	b.Enqueue(Script{Text: "Let me check.", Calls: []Call{{ID: "call_1", Name: "echo", Input: in}}})
	evs, resp, err := stream(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != coachd.StopToolUse || len(resp.Blocks) != 2 {
		t.Fatalf("stop, blocks = %q, %+v", resp.StopReason, resp.Blocks)
	}
	checkCall(t, evs, resp, 1, Call{"call_1", "echo", in})
}

func testParallel(t *testing.T, b Backend) {
	c1 := Call{"call_a", "echo", `{"text":"first of two"}`}
	c2 := Call{"call_b", "echo", `{"text":"second of two"}`}
	b.Enqueue(Script{Calls: []Call{c1, c2}})
	evs, resp, err := stream(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != coachd.StopToolUse || len(resp.Blocks) != 2 {
		t.Fatalf("stop, blocks = %q, %+v", resp.StopReason, resp.Blocks)
	}
	checkCall(t, evs, resp, 0, c1)
	checkCall(t, evs, resp, 1, c2)
}

// checkCall checks block i is call c, and that the events told it: a
// tool_use_start naming it, input deltas adding up to its input.
func checkCall(t *testing.T, evs []coachd.ModelEvent, resp *coachd.ModelResponse, i int, c Call) {
	t.Helper()
	bl := resp.Blocks[i]
	if bl.Type != coachd.BlockToolUse || bl.ID != c.ID || bl.Name != c.Name || !jsonEqual(bl.Input, []byte(c.Input)) {
		t.Errorf("block %d = %+v, want %+v", i, bl, c)
	}
	starts := 0
	for _, ev := range evs {
		if ev.Type == coachd.ModelToolUseStart && ev.Index == i {
			starts++
			if ev.ID != c.ID || ev.Name != c.Name {
				t.Errorf("tool_use_start %d = %s %s, want %s %s", i, ev.ID, ev.Name, c.ID, c.Name)
			}
		}
	}
	if starts != 1 {
		t.Errorf("%d tool_use_start events for block %d, want 1", starts, i)
	}
	if got := deltas(evs, coachd.ModelInputJSONDelta, i); !jsonEqual([]byte(got), []byte(c.Input)) {
		t.Errorf("input deltas of block %d = %s, want %s", i, got, c.Input)
	}
}

func testMaxTokens(t *testing.T, b Backend) {
	b.Enqueue(Script{Text: "This answer is cut", MaxTokens: true})
	_, resp, err := stream(t, b)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StopReason != coachd.StopMaxTokens || resp.Blocks[0].Text != "This answer is cut" {
		t.Errorf("stop, blocks = %q, %+v", resp.StopReason, resp.Blocks)
	}
}

// testErrors checks the statuses classify as the Anthropic adapter's do:
// busy (429, 503) is retryable and a reason to fall back; the rest is not.
func testErrors(t *testing.T, b Backend) {
	tests := []struct {
		status    int
		code      string
		retryable bool
	}{
		{429, coachd.EUPSTREAMBUSY, true},
		{503, coachd.EUPSTREAMBUSY, true},
		{500, coachd.EAPI, false},
		{401, coachd.EUPSTREAMAUTH, false},
		{400, coachd.EINVALID, false},
	}
	for _, tt := range tests {
		b.Enqueue(Script{Status: tt.status})
		_, resp, err := stream(t, b)
		var ce *coachd.Error
		if !errors.As(err, &ce) {
			t.Fatalf("%d: err = %v, want *coachd.Error", tt.status, err)
		}
		if ce.Code != tt.code || ce.Retryable != tt.retryable {
			t.Errorf("%d: code, retryable = %s, %v, want %s, %v", tt.status, ce.Code, ce.Retryable, tt.code, tt.retryable)
		}
		if len(resp.Blocks) != 0 || resp.Usage.Total() != 0 {
			t.Errorf("%d: a refused request has response %+v", tt.status, resp)
		}
	}
	if got := b.Requests(); got != len(tests) {
		t.Errorf("%d requests, want %d (no retries)", got, len(tests))
	}
}

func testBusyMidStream(t *testing.T, b Backend) {
	b.Enqueue(Script{Text: "Halfway there and then", BusyAfterText: true})
	evs, resp, err := stream(t, b)
	var ce *coachd.Error
	if !errors.As(err, &ce) || ce.Code != coachd.EUPSTREAMBUSY || !ce.Retryable {
		t.Fatalf("err = %v, want a retryable %s", err, coachd.EUPSTREAMBUSY)
	}
	text := deltas(evs, coachd.ModelTextDelta, 0)
	if text == "" || len(resp.Blocks) != 1 || resp.Blocks[0].Text != text || resp.StopReason != "" {
		t.Errorf("partial = %q, %+v (stop %q)", text, resp.Blocks, resp.StopReason)
	}
	if resp.Usage.OutputTokens < coachd.TokensOfBytes(len(text)) {
		t.Errorf("usage %+v does not charge the %d bytes streamed", resp.Usage, len(text))
	}
}

func testCancel(t *testing.T, b Backend) {
	b.Enqueue(Script{Text: "Thinking out loud", Stall: true})
	primary, _ := b.ModelNames()
	// The deadline only keeps a broken adapter from hanging the suite.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := b.Model().Stream(ctx, Hello(primary))
	defer s.Close()
	var text string
	for s.Next() {
		if ev := s.Event(); ev.Type == coachd.ModelTextDelta {
			text += ev.Text
			cancel() // the client went away mid-reply
		}
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", s.Err())
	}
	if r := s.Response(); text == "" || len(r.Blocks) != 1 || r.Blocks[0].Text != text {
		t.Errorf("partial response = %+v, streamed %q", r.Blocks, text)
	}
}

// runner starts a real SQLite store and a Runner over b's model with an
// echo tool, and returns a function running one turn.
func runner(t *testing.T, b Backend, fallback bool) func(msg string) *agent.Result {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "coachd.db"), coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &coachd.User{Name: "ada", TokenBudget: 1_000_000}
	if err := db.CreateUser(ctx, u, "hash-"+t.Name()); err != nil {
		t.Fatal(err)
	}
	ag := agent.DefaultAgent()
	ag.Tools = []string{"echo"}
	ag.Model, ag.FallbackModel = b.ModelNames()
	if !fallback {
		ag.FallbackModel = ""
	}
	ts, err := agent.NewToolset(echoTool{})
	if err != nil {
		t.Fatal(err)
	}
	r := agent.NewRunner(agent.Config{Store: db, Tools: ts, Model: b.Model(),
		Agents: func(string) (*agent.Agent, bool) { return ag, true }})
	return func(msg string) *agent.Result {
		tr, err := r.Prepare(ctx, agent.TurnRequest{User: u, Message: msg})
		if err != nil {
			t.Fatalf("prepare: %v", err)
		}
		return tr.Run(ctx, discard{})
	}
}

func testRunnerToolRound(t *testing.T, b Backend) {
	turn := runner(t, b, false)
	b.Enqueue(
		Script{Text: "Checking both.", Calls: []Call{{"call_x", "echo", `{"text":"one"}`}, {"call_y", "echo", `{"text":"two"}`}}},
		Script{Text: "Both echoed."},
	)
	res := turn("echo one and two")
	if res.StopReason != coachd.TurnEndTurn || !strings.HasSuffix(res.Text, "Both echoed.") || len(res.ToolCalls) != 2 {
		t.Fatalf("result = %+v (err %v)", res, res.Err)
	}
	got := b.LastToolResults()
	if got["call_x"] != "echo: one" || got["call_y"] != "echo: two" {
		t.Errorf("tool results sent back = %v", got)
	}
	// The next turn sends the whole history (tool round included) again.
	b.Enqueue(Script{Text: "Still here."})
	if res := turn("and now?"); res.StopReason != coachd.TurnEndTurn || res.Text != "Still here." {
		t.Fatalf("second turn = %+v (err %v)", res, res.Err)
	}
}

func testRunnerFallback(t *testing.T, b Backend) {
	turn := runner(t, b, true)
	primary, fallback := b.ModelNames()
	b.Enqueue(Script{Status: 503}, Script{Text: "From the fallback."})
	res := turn("hi")
	if res.StopReason != coachd.TurnEndTurn || res.Text != "From the fallback." {
		t.Fatalf("result = %+v (err %v)", res, res.Err)
	}
	if b.Requests() != 2 || b.LastModel() != fallback {
		t.Errorf("%d requests, last for %q; want 2, the second for %q (first %q)", b.Requests(), b.LastModel(), fallback, primary)
	}
}

func deltas(evs []coachd.ModelEvent, typ string, index int) string {
	var sb strings.Builder
	for _, ev := range evs {
		if ev.Type == typ && ev.Index == index {
			sb.WriteString(ev.Text)
		}
	}
	return sb.String()
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// echoTool answers "echo: <text>".
type echoTool struct{}

func (echoTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "echo", Description: "Echoes its text.", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}
}

func (echoTool) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct{ Text string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return coachd.ToolResult{}, err
	}
	return coachd.ToolResult{Content: "echo: " + in.Text}, nil
}

type discard struct{}

func (discard) Send(coachd.Event) error { return nil }
