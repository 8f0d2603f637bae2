package agent_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// firstReservation is the user's first reservation, found through the
// ledger's first row (its reserve).
func (h *harness) firstReservation() *coachd.Reservation {
	h.t.Helper()
	ctx := context.Background()
	rows, err := h.store.Ledger(ctx, h.user.ID)
	if err != nil || len(rows) == 0 || rows[0].Reason != "reserve" {
		h.t.Fatalf("ledger %+v %v", rows, err)
	}
	r, err := h.store.FindReservation(ctx, h.user.ID, rows[0].ReservationID)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// lastReservation is the reservation of the user's last ledger row: the
// last turn's.
func (h *harness) lastReservation() *coachd.Reservation {
	h.t.Helper()
	ctx := context.Background()
	rows, err := h.store.Ledger(ctx, h.user.ID)
	if err != nil || len(rows) == 0 {
		h.t.Fatalf("ledger %+v %v", rows, err)
	}
	r, err := h.store.FindReservation(ctx, h.user.ID, rows[len(rows)-1].ReservationID)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

// mustSettled asserts the ledger after one turn on a fresh user: the
// invariant holds, nothing is held any more, the user was charged exactly
// the turn's usage, and the turn's reservation ended in state want.
func (h *harness) mustSettled(res *agent.Result, want coachd.ReservationState) *coachd.Reservation {
	h.t.Helper()
	ctx := context.Background()
	drift, err := h.store.CheckLedger(ctx)
	if err != nil || len(drift) > 0 {
		h.t.Fatalf("ledger drift %+v %v", drift, err)
	}
	st, err := h.store.BudgetStatus(ctx, h.user.ID)
	if err != nil {
		h.t.Fatal(err)
	}
	if st.TokensReserved != 0 || st.TokensUsed != res.Usage.Total() {
		h.t.Fatalf("used %d reserved %d; turn usage %d", st.TokensUsed, st.TokensReserved, res.Usage.Total())
	}
	r := h.firstReservation()
	if r.State != want || r.Charged != res.Usage.Total() || r.Held != 0 {
		h.t.Fatalf("reservation %+v; want state %s, charged %d", r, want, res.Usage.Total())
	}
	return r
}

func usage(in, out int64) coachd.Usage { return coachd.Usage{InputTokens: in, OutputTokens: out} }

func TestBudgetEveryExitPath(t *testing.T) {
	t.Run("EndTurn", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Text("Hello.", 5).WithUsage(usage(100, 20)))
		s := &sink{}
		res := h.turn(agent.TurnRequest{Message: "hi"}, s)
		h.mustSettled(res, coachd.ReservationFinalized)
		ended := s.of(coachd.EventTurnEnded)[0].Usage
		if ended.TokensUsed != 120 || ended.BudgetRemaining == nil || *ended.BudgetRemaining != 1_000_000-120 {
			t.Fatalf("turn_ended usage %+v", ended)
		}
		if u := s.of(coachd.EventUsage)[0].Usage; u.BudgetRemaining == nil || *u.BudgetRemaining != 1_000_000-120 {
			t.Fatalf("usage event %+v", u)
		}
	})
	t.Run("MaxRounds", func(t *testing.T) {
		h := newHarness(t, agent.Limits{MaxRounds: 3})
		h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
			return anthropictest.Blocks(use("e"+time.Now().Format("150405.000000000"), "echo", `{}`)).WithUsage(usage(50, 10))
		})
		res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
		if res.StopReason != coachd.TurnMaxRounds || res.Usage.Total() != 180 {
			t.Fatalf("stop %s usage %+v", res.StopReason, res.Usage)
		}
		h.mustSettled(res, coachd.ReservationFinalized)
	})
	t.Run("Deadline", func(t *testing.T) {
		h := newHarness(t, agent.Limits{MaxDuration: 300 * time.Millisecond})
		h.fake.Enqueue(anthropictest.Blocks(use("s1", "slow", `{}`)).WithUsage(usage(70, 7)))
		res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
		if res.StopReason != coachd.TurnDeadline {
			t.Fatalf("stop %s", res.StopReason)
		}
		h.mustSettled(res, coachd.ReservationFinalized)
	})
	t.Run("CircuitOpen", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Blocks(use("f1", "fail", `{}`)), anthropictest.Blocks(use("f2", "fail", `{}`)))
		res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
		if res.StopReason != coachd.TurnCircuitOpen {
			t.Fatalf("stop %s", res.StopReason)
		}
		h.mustSettled(res, coachd.ReservationFinalized)
	})
	t.Run("UpstreamErrorBeforeStream", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Status(http.StatusInternalServerError, nil,
			`{"type":"error","error":{"type":"api_error","message":"boom"}}`))
		res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
		if res.StopReason != coachd.TurnError || res.Usage.Total() != 0 {
			t.Fatalf("stop %s usage %+v", res.StopReason, res.Usage)
		}
		h.mustSettled(res, coachd.ReservationAborted)
	})
	t.Run("MidStreamError", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Text("Partial answer that will", 4).WithUsage(usage(300, 40)).
			ErrorAfter(4, "overloaded_error", "Overloaded"))
		res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{})
		if res.StopReason != coachd.TurnError || res.Usage.InputTokens != 300 {
			t.Fatalf("stop %s usage %+v", res.StopReason, res.Usage)
		}
		h.mustSettled(res, coachd.ReservationAborted) // the input was billed upstream: charged
	})
	t.Run("ClientDisconnect", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Text("This reply never finishes because", 5).WithUsage(usage(200, 30)).StallAfter(5))
		res := h.turn(agent.TurnRequest{Message: "hi"}, &sink{failAfter: 3})
		if res.StopReason != coachd.TurnAborted || res.Usage.InputTokens != 200 {
			t.Fatalf("stop %s usage %+v", res.StopReason, res.Usage)
		}
		h.mustSettled(res, coachd.ReservationAborted)
	})
	t.Run("AwaitingInput", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Pick one:", 3),
			use("o1", "show_options", `{"prompt":"Which?","options":["Airport","Downtown"]}`)).WithUsage(usage(90, 15)))
		res := h.turn(agent.TurnRequest{Message: "help me choose"}, &sink{})
		if res.StopReason != coachd.TurnAwaitingInput {
			t.Fatalf("stop %s err %v", res.StopReason, res.Err)
		}
		h.mustSettled(res, coachd.ReservationFinalized)
	})
	t.Run("RunnerPanic", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		h.fake.Enqueue(anthropictest.Blocks(use("e1", "echo", `{}`)).WithUsage(usage(80, 8)))
		tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tr.Run(context.Background(), panicSink{on: coachd.EventToolResult})
		}()
		h.mustSettled(&agent.Result{Usage: usage(80, 8)}, coachd.ReservationAborted)
	})
	t.Run("ClosedUnrun", func(t *testing.T) {
		h := newHarness(t, agent.Limits{})
		tr, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		tr.Close()
		h.mustSettled(&agent.Result{}, coachd.ReservationAborted)
	})
}

// panicSink panics when it receives an event of type on: a bug in the
// runner's own goroutine.
type panicSink struct{ on coachd.EventType }

func (p panicSink) Send(ev coachd.Event) error {
	if ev.Type == p.on {
		panic("sink exploded")
	}
	return nil
}

func TestBudgetExhaustedBeforeModel(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	budget := int64(50)
	if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	_, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "hi"})
	if coachd.ErrorCode(err) != coachd.EBUDGET {
		t.Fatalf("err %v, want budget_exhausted", err)
	}
	if n := len(h.fake.Requests()); n != 0 {
		t.Fatalf("%d model calls", n)
	}
}

func TestReserveMaxNeverOverspends(t *testing.T) {
	h := newHarness(t, agent.Limits{MaxRounds: 4})
	h.agent.Reserve = agent.ReserveMax
	h.agent.MaxTokens = 1000
	// Every round's tool call and result grow the history by ~800 tokens
	// the first estimate knew nothing of: the runner must stop before a
	// round that might not fit what is left of the hold.
	big := `{"s":"` + strings.Repeat("abcd ", 320) + `"}`
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Blocks(use("m"+time.Now().Format("150405.000000000"), "echo", big))
	})
	res := h.turn(agent.TurnRequest{Message: "go"}, &sink{})
	r := h.mustSettled(res, coachd.ReservationFinalized)
	if res.StopReason != agent.TurnBudget || r.Charged > r.Estimate {
		t.Fatalf("stop %s: charged %d of a %d hold", res.StopReason, r.Charged, r.Estimate)
	}
}

// TestReserveMaxDenseTokens: a user's text that the tokenizer splits
// finer than the size estimate's 4 bytes a token (CJK, emoji, digits)
// costs more per round than the rounds' size-based checks expect. The
// real input of each round is known once it is charged, and the next
// request holds all of it: a round that would not fit with it is not run.
func TestReserveMaxDenseTokens(t *testing.T) {
	h := newHarness(t, agent.Limits{MaxRounds: 3})
	h.agent.Reserve = agent.ReserveMax
	h.agent.MaxTokens = 200
	n := 0
	h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		n++
		// Two tokens where the estimate counts one.
		u := coachd.Usage{InputTokens: int64(len(r.Raw)) / 2, OutputTokens: 20}
		return anthropictest.Blocks(use("d"+strconv.Itoa(n), "echo", `{"s":"x"}`)).WithUsage(u)
	})
	res := h.turn(agent.TurnRequest{Message: strings.Repeat("駅前 ", 200)}, &sink{})
	r := h.mustSettled(res, coachd.ReservationFinalized)
	if res.StopReason != agent.TurnBudget || r.Charged > r.Estimate {
		t.Fatalf("stop %s after %d rounds: charged %d of a %d hold", res.StopReason, n, r.Charged, r.Estimate)
	}
}

func TestFreePreview(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	h.agent.FreePreviewTurns = 1
	zero := int64(0)
	if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &zero}); err != nil {
		t.Fatal(err)
	}
	h.fake.Enqueue(anthropictest.Text("Welcome!", 5).WithUsage(usage(100, 20)))
	s := &sink{}
	res := h.turn(agent.TurnRequest{Message: "hi"}, s)
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	st, _ := h.store.BudgetStatus(context.Background(), h.user.ID)
	if st.TokensUsed != 0 || st.TokensReserved != 0 {
		t.Fatalf("free turn charged: %+v", st)
	}
	_, err := h.runner.Prepare(context.Background(), agent.TurnRequest{User: h.user, SessionID: res.SessionID, Message: "more"})
	if coachd.ErrorCode(err) != coachd.EBUDGET {
		t.Fatalf("second turn: %v", err)
	}
}

func TestExecuteToolSameAsLoop(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	exec := func(name, input string) *agent.ExecResult {
		t.Helper()
		out, err := h.runner.ExecuteTool(ctx, agent.ExecRequest{User: h.user, Call: coachd.ToolCall{Name: name, Input: json.RawMessage(input)}})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if r := exec("echo", `{"a":1}`); r.IsError || r.Result != `echo {"a":1}` {
		t.Fatalf("echo %+v", r)
	}
	if r := exec("boom", `{}`); !r.IsError {
		t.Fatalf("panic not an is_error result: %+v", r)
	}
	if r := exec("save_note", `{"note_type":"preference"}`); !r.IsError || r.ToolName != "save_note" {
		t.Fatalf("invalid input %+v", r)
	}
	if r := exec("nope", `{}`); !r.IsError {
		t.Fatalf("unknown tool %+v", r)
	}
	_, err := h.runner.ExecuteTool(ctx, agent.ExecRequest{User: h.user, Call: coachd.ToolCall{Name: "show_options", Input: json.RawMessage(`{}`)}})
	if coachd.ErrorCode(err) != coachd.EINVALID {
		t.Fatalf("interactive: %v", err)
	}
}

// TestBudgetRemainingAfterCut: an operator cuts the budget below what the
// user holds mid-turn; once the turn's next charge reads the cut, the
// usage event's budget_remaining says what the user can really still
// spend (nothing), not what the hold would have left.
func TestBudgetRemainingAfterCut(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	n := 0
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		n++
		if n == 1 {
			budget := int64(100)
			if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
				t.Error(err)
			}
			return anthropictest.Blocks(use("c1", "echo", `{"s":"x"}`)).WithUsage(usage(100, 20))
		}
		// The text syncs the round's charge (which read the cut) first.
		return anthropictest.Text("Hello.", 5).WithUsage(usage(100, 20))
	})
	s := &sink{}
	h.turn(agent.TurnRequest{Message: "hi"}, s)
	evs := s.of(coachd.EventUsage)
	if len(evs) != 2 {
		t.Fatalf("%d usage events", len(evs))
	}
	if u := evs[1].Usage; u.BudgetRemaining == nil || *u.BudgetRemaining != 0 {
		t.Fatalf("second usage: budget_remaining %v, want 0", *u.BudgetRemaining)
	}
	if drift, err := h.store.CheckLedger(context.Background()); err != nil || len(drift) > 0 {
		t.Fatalf("ledger drift %+v %v", drift, err)
	}
}
