package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/tools"
)

// TestParallelTurnsAtBudgetEdge: one user's turns run at once on many
// sessions, split between two replicas (two stores on one Postgres; two
// runners on one SQLite file), under reserve: max at the edge of the
// budget, and half of them are cancelled while their tool runs. Each wave
// of admissions holds exactly what is left (no more turns than their
// holds fit), every call the model billed is charged once, the sum never
// passes the budget, and no hold is left once the turns are done.
func TestParallelTurnsAtBudgetEdge(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) (a, b *sqlstore.DB)
	}{
		{"sqlite", func(t *testing.T) (*sqlstore.DB, *sqlstore.DB) {
			db := openStore(t, filepath.Join(t.TempDir(), "coachd.db"))
			return db, db
		}},
		{"postgres", func(t *testing.T) (*sqlstore.DB, *sqlstore.DB) {
			dsn := pgtest.NewDatabase(t)
			return openStore(t, dsn), openStore(t, dsn)
		}},
	} {
		t.Run(b.name, func(t *testing.T) {
			dbA, dbB := b.open(t)
			e := newEdge(t, dbA, dbB)
			hold := e.hold()
			budget := 2*hold + hold/2
			if _, err := dbA.UpdateUser(t.Context(), e.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
				t.Fatal(err)
			}
			// Waves: every admission at once, then every admitted turn at
			// once, until none fits.
			waves := 0
			for {
				st := e.status()
				want := min(coachd.RemainingTokens(budget, st.TokensUsed, st.TokensReserved)/hold, 6)
				turns := e.prepareAll(6)
				if int64(len(turns)) != want {
					t.Fatalf("wave %d: %d of 6 turns admitted with %d left of %d, holds of %d: want %d",
						waves, len(turns), budget-st.TokensUsed, budget, hold, want)
				}
				if len(turns) == 0 {
					break
				}
				e.runAll(turns)
				e.mustBalanced(budget)
				waves++
			}
			if waves < 2 {
				t.Fatalf("%d waves: the budget's edge was never reached twice", waves)
			}
			// A free-for-all: turns admitted while others run and settle.
			budget += 4 * hold
			if _, err := dbB.UpdateUser(t.Context(), e.user.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for w := range 6 {
				wg.Go(func() {
					for i := 0; ; i++ {
						tr, ok := e.prepare(w, i)
						if !ok {
							return
						}
						e.runAll([]*agent.Turn{tr})
					}
				})
			}
			wg.Wait()
			e.mustBalanced(budget)
		})
	}
}

// openStore opens and migrates dsn, closed when the test ends.
func openStore(t *testing.T, dsn string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), dsn, coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// edge is a user, a fake model and two replicas' runners.
type edge struct {
	t       *testing.T
	dbA     *sqlstore.DB
	fake    *anthropictest.Server
	runners [2]*agent.Runner
	user    *coachd.User
	cancels sync.Map // session id → its turn's cancel
	n       atomic.Int64
}

func newEdge(t *testing.T, dbA, dbB *sqlstore.DB) *edge {
	e := &edge{t: t, dbA: dbA, fake: anthropictest.NewServer()}
	t.Cleanup(e.fake.Close)
	e.user = &coachd.User{Name: "edge", TokenBudget: 1_000_000}
	if err := dbA.CreateUser(t.Context(), e.user, "hash-edge"); err != nil {
		t.Fatal(err)
	}
	park := parkTool{e}
	ag := agent.DefaultAgent()
	ag.Reserve, ag.MaxTokens = agent.ReserveMax, 50
	ag.Limits = agent.Limits{MaxRounds: 2}
	ag.Tools = append(ag.Tools, "park")
	ts, err := agent.NewToolset(append(tools.Builtins(), park)...)
	if err != nil {
		t.Fatal(err)
	}
	e.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
		in := usage(int64(len(r.Raw))/4, 5)
		if len(r.ToolResults()) > 0 {
			return anthropictest.Text("Done.", 1).WithUsage(in)
		}
		input := `{}`
		if strings.Contains(r.LastUserText(), "park") {
			input = `{"mode":"park"}`
		}
		return anthropictest.Blocks(use("p"+strconv.FormatInt(e.n.Add(1), 10), "park", input)).WithUsage(in)
	})
	for i, db := range []*sqlstore.DB{dbA, dbB} {
		e.runners[i] = agent.NewRunner(agent.Config{
			Store: db, Tools: ts, Agents: func(string) (*agent.Agent, bool) { return ag, true },
			Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: e.fake.URL(), MaxRetries: -1, Untraced: true}),
		})
	}
	return e
}

// message is the w-th worker's i-th message: every one the same length,
// so that every turn holds the same; odd workers' turns park.
func message(w, i int) string {
	mode := "free"
	if w%2 == 1 {
		mode = "park"
	}
	return fmt.Sprintf("turn %02d-%04d %s", w, i, mode)
}

// hold is what a turn holds: one prepared and given up unrun.
func (e *edge) hold() int64 {
	e.t.Helper()
	tr, ok := e.prepare(0, 0)
	if !ok {
		e.t.Fatal("the first turn was refused")
	}
	tr.Close()
	rows, err := e.dbA.Ledger(e.t.Context(), e.user.ID)
	if err != nil || len(rows) == 0 {
		e.t.Fatalf("ledger %v %v", rows, err)
	}
	return rows[0].Reserved
}

// prepare admits worker w's i-th turn on a new session, on replica w%2;
// false when the budget refuses it.
func (e *edge) prepare(w, i int) (*agent.Turn, bool) {
	tr, err := e.runners[w%2].Prepare(context.Background(), agent.TurnRequest{User: e.user, Message: message(w, i)})
	switch {
	case err == nil:
		return tr, true
	case coachd.ErrorCode(err) != coachd.EBUDGET:
		e.t.Errorf("turn %d-%d: %v", w, i, err)
	}
	return nil, false
}

// prepareAll admits n turns at once and returns those admitted.
func (e *edge) prepareAll(n int) []*agent.Turn {
	out := make([]*agent.Turn, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() { out[w], _ = e.prepare(w, int(e.n.Add(1))) })
	}
	wg.Wait()
	var turns []*agent.Turn
	for _, tr := range out {
		if tr != nil {
			turns = append(turns, tr)
		}
	}
	return turns
}

// runAll runs turns at once and returns when all are done.
func (e *edge) runAll(turns []*agent.Turn) {
	var wg sync.WaitGroup
	for _, tr := range turns {
		ctx, cancel := context.WithCancel(context.Background())
		e.cancels.Store(tr.SessionID(), cancel)
		wg.Go(func() {
			defer cancel()
			tr.Run(ctx, &sink{})
		})
	}
	wg.Wait()
}

// parkTool, asked to park, cancels its turn and returns once that is
// done: a turn stopped (a client gone, a Stop) while its tool runs.
type parkTool struct{ e *edge }

func (p parkTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "park", Description: "park", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (p parkTool) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	if !strings.Contains(string(call.Input), "park") {
		return coachd.ToolResult{Content: "done"}, nil
	}
	cancel, ok := p.e.cancels.Load(env.Session.ID)
	if !ok {
		return coachd.ToolResult{}, fmt.Errorf("no turn on session %s", env.Session.ID)
	}
	cancel.(context.CancelFunc)()
	<-ctx.Done()
	return coachd.ToolResult{}, ctx.Err()
}

func (e *edge) status() *coachd.BudgetStatus {
	e.t.Helper()
	st, err := e.dbA.BudgetStatus(e.t.Context(), e.user.ID)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// mustBalanced checks the user's account with no turn running: nothing
// held, every model call charged once, the budget not passed, the
// ledger balanced.
func (e *edge) mustBalanced(budget int64) {
	e.t.Helper()
	st := e.status()
	var billed int64
	for _, r := range e.fake.Requests() {
		billed += r.Usage.Total()
	}
	if st.TokensReserved != 0 || st.TokensUsed != billed || st.TokensUsed > budget {
		e.t.Fatalf("used %d, reserved %d of a budget of %d; the model billed %d", st.TokensUsed, st.TokensReserved, budget, billed)
	}
	drift, err := e.dbA.CheckLedger(e.t.Context())
	if err != nil || len(drift) > 0 {
		e.t.Fatalf("ledger drift %+v %v", drift, err)
	}
	if n, err := e.dbA.ExpireReservations(e.t.Context()); err != nil || n != 0 {
		e.t.Fatalf("%d holds left to expire (%v)", n, err)
	}
}
