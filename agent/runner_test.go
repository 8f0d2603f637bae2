package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/tools"
)

// testTool is a tool whose behaviour a test chooses.
type testTool struct {
	name string
	run  func(ctx context.Context, call coachd.ToolCall) (coachd.ToolResult, error)
}

func (tt testTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: tt.name, Description: tt.name, Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (tt testTool) Execute(ctx context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	return tt.run(ctx, call)
}

var (
	echoTool = testTool{"echo", func(_ context.Context, c coachd.ToolCall) (coachd.ToolResult, error) {
		return coachd.ToolResult{Content: "echo " + string(c.Input)}, nil
	}}
	failTool = testTool{"fail", func(context.Context, coachd.ToolCall) (coachd.ToolResult, error) {
		return coachd.ToolResult{}, coachd.Errorf(coachd.EINVALID, "it broke")
	}}
	boomTool = testTool{"boom", func(context.Context, coachd.ToolCall) (coachd.ToolResult, error) {
		panic("kaboom")
	}}
	slowTool = testTool{"slow", func(ctx context.Context, _ coachd.ToolCall) (coachd.ToolResult, error) {
		<-ctx.Done()
		return coachd.ToolResult{}, ctx.Err()
	}}
)

// sink records events; with failAfter > 0 it reports the client gone from
// that event on.
type sink struct {
	mu        sync.Mutex
	events    []coachd.Event
	failAfter int
}

func (s *sink) Send(ev coachd.Event) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, ev)
	if s.failAfter > 0 && len(s.events) >= s.failAfter {
		return errors.New("client gone")
	}
	return nil
}

func (s *sink) of(typ coachd.EventType) []coachd.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []coachd.Event
	for _, e := range s.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

type harness struct {
	t      testing.TB
	store  *sqlstore.DB
	fake   *anthropictest.Server
	runner *agent.Runner
	user   *coachd.User
	agent  *agent.Agent
}

func newHarness(t *testing.T, lim agent.Limits) *harness {
	t.Helper()
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "echo", "fail", "boom", "slow")
	ag.Limits = lim
	h := harnessOver(t, append(tools.Builtins(), echoTool, failTool, boomTool, slowTool),
		func(string) (*agent.Agent, bool) { return ag, true })
	h.agent = ag
	return h
}

// harnessOver starts a real SQLite store, a fake Anthropic API and a
// runner serving agents over toolList, with one user.
func harnessOver(t testing.TB, toolList []coachd.Tool, agents func(string) (*agent.Agent, bool)) *harness {
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
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	u := &coachd.User{Name: "ada", TokenBudget: 1_000_000}
	if err := db.CreateUser(ctx, u, "hash-"+t.Name()); err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, store: db, fake: fake, user: u}
	h.runner = h.newRunner(toolList, agents, nil)
	return h
}

// newRunner returns another runner over the harness's store and fake (a
// second replica, or one configured differently by mod).
func (h *harness) newRunner(toolList []coachd.Tool, agents func(string) (*agent.Agent, bool), mod func(*agent.Config)) *agent.Runner {
	h.t.Helper()
	ts, err := agent.NewToolset(toolList...)
	if err != nil {
		h.t.Fatal(err)
	}
	cfg := agent.Config{
		Store: h.store, Tools: ts, Agents: agents,
		// Untraced, as coachd serve without --otlp-endpoint: calls go out
		// through the SDK's Post (anthropic.Model.Stream).
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: h.fake.URL(), MaxRetries: -1, Untraced: true}),
	}
	if mod != nil {
		mod(&cfg)
	}
	return agent.NewRunner(cfg)
}

// turn prepares and runs one turn.
func (h *harness) turn(req agent.TurnRequest, s *sink) *agent.Result {
	h.t.Helper()
	req.User = h.user
	tr, err := h.runner.Prepare(context.Background(), req)
	if err != nil {
		h.t.Fatalf("prepare: %v", err)
	}
	return tr.Run(context.Background(), s)
}

func (h *harness) history(sessionID string) []*coachd.Message {
	h.t.Helper()
	msgs, err := h.store.History(context.Background(), h.user.ID, sessionID)
	if err != nil {
		h.t.Fatal(err)
	}
	return msgs
}

// assertValidHistory checks the stored history the way the API would: every
// tool_use answered by a tool_result in the next message.
func (h *harness) assertValidHistory(sessionID string) {
	h.t.Helper()
	msgs := h.history(sessionID)
	for i, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type != coachd.BlockToolUse {
				continue
			}
			if i+1 >= len(msgs) {
				h.t.Fatalf("tool_use %s in the last stored message", b.ID)
			}
			found := false
			for _, nb := range msgs[i+1].Blocks {
				found = found || (nb.Type == coachd.BlockToolResult && nb.ToolUseID == b.ID)
			}
			if !found {
				h.t.Fatalf("tool_use %s unanswered in message %d", b.ID, i+1)
			}
		}
	}
}

func use(id, name, input string) anthropictest.BlockSpec {
	return anthropictest.ToolUse(id, name, input)
}

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	os.Exit(code)
}

func TestEndTurn(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(anthropictest.Text("Hello there, driver!", 5))
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "hi"}, s)
	if res.StopReason != coachd.TurnEndTurn || res.Text != "Hello there, driver!" {
		t.Fatalf("got %+v", res)
	}
	var text strings.Builder
	for _, e := range s.of(coachd.EventTextDelta) {
		text.WriteString(e.Text)
	}
	if got := text.String(); got != "Hello there, driver!" {
		t.Fatalf("streamed %q", got)
	}
	if n := len(s.of(coachd.EventTextDelta)); n < 2 {
		t.Fatalf("want several deltas, got %d", n)
	}
	first, last := s.events[0], s.events[len(s.events)-1]
	if first.Type != coachd.EventTurnStarted || last.Type != coachd.EventTurnEnded || last.StopReason != coachd.TurnEndTurn {
		t.Fatalf("first %v last %v", first.Type, last.Type)
	}
	for i, e := range s.events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	msgs := h.history(res.SessionID)
	if len(msgs) != 2 || msgs[0].Role != coachd.RoleUser || msgs[0].Content != "hi" || msgs[1].ID != res.MessageID || first.MessageID != res.MessageID {
		t.Fatalf("stored %+v", msgs)
	}
	if msgs[1].Usage == nil || msgs[1].Usage.OutputTokens == 0 || res.Usage.Total() == 0 {
		t.Fatalf("usage not recorded: %+v %+v", msgs[1].Usage, res.Usage)
	}
}

func TestParallelToolsFailAndPanic(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(
		anthropictest.Blocks(anthropictest.TextBlock("Checking.", 4), use("t1", "echo", `{"a":1}`), use("t2", "fail", `{}`), use("t3", "boom", `{}`)),
		anthropictest.Text("Done.", 2),
	)
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "go"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	results := s.of(coachd.EventToolResult)
	if len(results) != 3 {
		t.Fatalf("got %d results", len(results))
	}
	for i, want := range []struct {
		id      string
		isError bool
		text    string
	}{{"t1", false, `echo {"a":1}`}, {"t2", true, "it broke"}, {"t3", true, "internal error"}} {
		r := results[i]
		if r.ToolUseID != want.id || r.IsError != want.isError || !strings.Contains(r.Result, want.text) {
			t.Fatalf("result %d: %+v", i, r)
		}
	}
	if len(s.of(coachd.EventRoundBoundary)) != 1 || len(s.of(coachd.EventToolCallStarted)) != 3 {
		t.Fatalf("events %+v", s.events)
	}
	h.assertValidHistory(res.SessionID)
	msgs := h.history(res.SessionID)
	if len(msgs) != 4 {
		t.Fatalf("want 4 stored messages, got %d", len(msgs))
	}
	var meta struct {
		ToolCalls []struct{ Name string } `json:"tool_calls"`
	}
	if err := json.Unmarshal(msgs[1].Metadata, &meta); err != nil || len(meta.ToolCalls) != 3 || meta.ToolCalls[2].Name != "boom" {
		t.Fatalf("metadata %s", msgs[1].Metadata)
	}
	if msgs[1].Content != "Checking." {
		t.Fatalf("content %q", msgs[1].Content)
	}
	// The second request carried the three results, in call order.
	reqs := h.fake.Requests()
	got := reqs[1].ToolResults()
	if len(got) != 3 || got[0].ToolUseID != "t1" || got[2].ToolUseID != "t3" || !got[2].IsError {
		t.Fatalf("sent %+v", got)
	}
}

func TestCircuitBreaker(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	n := 0
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		n++
		return anthropictest.Blocks(use("f"+string(rune('a'+n)), "fail", `{}`))
	})
	res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
	if res.StopReason != coachd.TurnCircuitOpen || len(h.fake.Requests()) != 2 {
		t.Fatalf("stop %s after %d requests", res.StopReason, len(h.fake.Requests()))
	}
	h.assertValidHistory(res.SessionID)
}

func TestMaxRounds(t *testing.T) {
	h := newHarness(t, agent.Limits{MaxRounds: 3})
	n := 0
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		n++
		return anthropictest.Blocks(use("e"+string(rune('a'+n)), "echo", `{}`))
	})
	res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
	if res.StopReason != coachd.TurnMaxRounds || len(h.fake.Requests()) != 3 {
		t.Fatalf("stop %s after %d requests", res.StopReason, len(h.fake.Requests()))
	}
	h.assertValidHistory(res.SessionID)
}

func TestToolLimit(t *testing.T) {
	h := newHarness(t, agent.Limits{MaxToolCalls: 2})
	h.fake.Enqueue(anthropictest.Blocks(use("a", "echo", `{}`), use("b", "echo", `{}`), use("c", "echo", `{}`)))
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "go"}, s)
	if res.StopReason != coachd.TurnToolLimit {
		t.Fatalf("stop %s", res.StopReason)
	}
	msgs := h.history(res.SessionID)
	for _, b := range msgs[len(msgs)-1].Blocks {
		if !b.IsError || !strings.Contains(b.ResultText(), "limit of 2") {
			t.Fatalf("result %+v", b)
		}
	}
	h.assertValidHistory(res.SessionID)
}

func TestDeadline(t *testing.T) {
	h := newHarness(t, agent.Limits{MaxDuration: 300 * time.Millisecond})
	h.fake.Enqueue(anthropictest.Blocks(use("s1", "slow", `{}`)))
	res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
	if res.StopReason != coachd.TurnDeadline {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	h.assertValidHistory(res.SessionID)
	// The next turn works on that history.
	h.fake.Enqueue(anthropictest.Text("back", 10))
	if res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "again"}, &sink{}); res2.StopReason != coachd.TurnEndTurn {
		t.Fatalf("next turn: %s %v", res2.StopReason, res2.Err)
	}
}

func TestInvalidInputCorrected(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(
		anthropictest.Blocks(use("n1", "save_note", `{"note_type":"preference","content":"likes mornings"}`)),
		anthropictest.Blocks(use("n2", "save_note", `{"note_type":"preference","title":"Mornings","content":"likes mornings"}`)),
		anthropictest.Text("Noted.", 3),
	)
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "remember I like mornings"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s", res.StopReason)
	}
	results := s.of(coachd.EventToolResult)
	if !results[0].IsError || !strings.Contains(results[0].Result, "title") || results[1].IsError {
		t.Fatalf("results %+v", results)
	}
	notes, _, err := h.store.ListNotes(context.Background(), h.user.ID, coachd.NoteFilter{}, coachd.Page{})
	if err != nil || len(notes) != 1 || notes[0].Title != "Mornings" || notes[0].SessionID != res.SessionID {
		t.Fatalf("notes %+v %v", notes, err)
	}
}

func TestStopReasons(t *testing.T) {
	for _, tc := range []struct {
		reply anthropictest.Reply
		want  string
	}{
		{anthropictest.Text("I can't help with that.", 5).WithStop("refusal"), coachd.TurnRefusal},
		{anthropictest.Text("cut off mid", 5).WithStop("max_tokens"), coachd.TurnMaxTokens},
		{anthropictest.Blocks(anthropictest.TextBlock("a", 1), use("m1", "echo", `{"x":`)).WithStop("max_tokens"), coachd.TurnMaxTokens},
	} {
		t.Run(tc.want, func(t *testing.T) {
			h := newHarness(t, agent.Limits{})
			h.fake.Enqueue(tc.reply, anthropictest.Text("next", 4))
			res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
			if res.StopReason != tc.want {
				t.Fatalf("stop %s err %v", res.StopReason, res.Err)
			}
			h.assertValidHistory(res.SessionID)
			if res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "go on"}, &sink{}); res2.StopReason != coachd.TurnEndTurn {
				t.Fatalf("next turn: %s %v", res2.StopReason, res2.Err)
			}
		})
	}
}

func TestUpstreamErrorMidStream(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(anthropictest.Text("Partial answer that will", 4).ErrorAfter(4, "overloaded_error", "Overloaded"))
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "hi"}, s)
	if res.StopReason != coachd.TurnError || res.Err == nil || res.Err.Code != coachd.EUPSTREAMBUSY {
		t.Fatalf("stop %s err %+v", res.StopReason, res.Err)
	}
	errs := s.of(coachd.EventError)
	if len(errs) != 1 || errs[0].Err.Code != coachd.EUPSTREAMBUSY {
		t.Fatalf("error events %+v", errs)
	}
	msgs := h.history(res.SessionID)
	if len(msgs) != 2 || !msgs[1].Partial || msgs[1].Content == "" {
		t.Fatalf("stored %+v", msgs)
	}
	if len(h.fake.Requests()) != 1 {
		t.Fatalf("a mid-stream error must not be retried")
	}
}

func TestClientDisconnect(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(anthropictest.Text("This reply never finishes because", 5).StallAfter(5))
	// turn_started, then text deltas: the client leaves at the third event.
	s := &sink{failAfter: 3}
	res := h.turn(agent.TurnRequest{Message: "hi"}, s)
	if res.StopReason != coachd.TurnAborted {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	select {
	case <-h.fake.Disconnects():
	case <-time.After(5 * time.Second):
		t.Fatal("the fake never saw the upstream connection close")
	}
	msgs := h.history(res.SessionID)
	if len(msgs) != 2 || !msgs[1].Partial || !strings.HasPrefix("This reply never finishes because", msgs[1].Content) {
		t.Fatalf("stored %+v", msgs)
	}
	h.fake.Enqueue(anthropictest.Text("ok", 4))
	if res2 := h.turn(agent.TurnRequest{SessionID: res.SessionID, Message: "again"}, &sink{}); res2.StopReason != coachd.TurnEndTurn {
		t.Fatalf("next turn: %s %v", res2.StopReason, res2.Err)
	}
}

// TestRetry re-runs a turn the upstream refused: the stored user message
// is used as it is, not stored twice.
func TestRetry(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(anthropictest.Status(529, nil, ""), anthropictest.Text("Here now.", 4))
	res := h.turn(agent.TurnRequest{Message: "are you there?"}, &sink{})
	if res.StopReason != coachd.TurnError || res.Err.Code != coachd.EUPSTREAMBUSY {
		t.Fatalf("first: %s %v", res.StopReason, res.Err)
	}
	res = h.turn(agent.TurnRequest{SessionID: res.SessionID, Retry: true}, &sink{})
	if res.StopReason != coachd.TurnEndTurn || res.Text != "Here now." {
		t.Fatalf("retry: %s %v", res.StopReason, res.Err)
	}
	msgs := h.history(res.SessionID)
	if len(msgs) != 2 || msgs[0].Content != "are you there?" || msgs[1].Content != "Here now." {
		t.Fatalf("stored %d messages", len(msgs))
	}
	sent := h.fake.Requests()[1].Messages()
	if len(sent) != 1 || len(sent[0].Blocks) != 1 {
		t.Fatalf("retry sent %d messages", len(sent))
	}
	// The turn has its reply now: nothing to retry.
	_, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Retry: true})
	if coachd.ErrorCode(err) != coachd.ECONFLICT {
		t.Fatalf("second retry: %v", err)
	}
	_, err = h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Retry: true, Message: "x"})
	if coachd.ErrorCode(err) != coachd.EINVALID {
		t.Fatalf("retry with a message: %v", err)
	}
}

// TestCutCallEnds: a call the reply was cut in (max_tokens mid-input) was
// announced to the client (tool_call_started) and never runs: it gets a
// result marked Cut, so that a client showing it running can end it, and
// the dialects that announce only ready calls can skip it.
func TestCutCallEnds(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("a", 1), use("m1", "echo", `{"x":`)).WithStop("max_tokens"))
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "hi"}, s)
	if res.StopReason != coachd.TurnMaxTokens {
		t.Fatalf("stop %s err %v", res.StopReason, res.Err)
	}
	if started := s.of(coachd.EventToolCallStarted); len(started) != 1 || started[0].ToolUseID != "m1" {
		t.Fatalf("started %+v", started)
	}
	results := s.of(coachd.EventToolResult)
	if len(results) != 1 || results[0].ToolUseID != "m1" || results[0].ToolName != "echo" || !results[0].IsError || !results[0].Cut {
		t.Fatalf("results %+v; want one cut error result for m1", results)
	}
	if ready := s.of(coachd.EventToolCallReady); len(ready) != 0 {
		t.Fatalf("a cut call was made ready: %+v", ready)
	}
}
