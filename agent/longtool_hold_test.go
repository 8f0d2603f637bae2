package agent_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

// TestLongToolKeepsHold: a turn whose agent allows rounds longer than
// the reservation expiry (tool_timeout: 5m, max_duration: 15m, as the
// autobuild pack) keeps its hold while a tool runs past the expiry: the
// sweeper releasing it would let the user's other turns reserve budget
// the running turn still spends.
func TestLongToolKeepsHold(t *testing.T) {
	ctx := context.Background()
	clock := &manualClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "coachd.db"), clock)
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
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	h := &harness{t: t, store: db, fake: fake, user: u}
	started, release := make(chan struct{}), make(chan struct{})
	gate := testTool{"build", func(ctx context.Context, _ coachd.ToolCall) (coachd.ToolResult, error) {
		close(started)
		select {
		case <-release:
			return coachd.ToolResult{Content: "built"}, nil
		case <-ctx.Done():
			return coachd.ToolResult{}, ctx.Err()
		}
	}}
	ag := agent.DefaultAgent()
	ag.Tools = append(ag.Tools, "build")
	ag.Limits = agent.Limits{MaxDuration: 15 * time.Minute, ToolTimeout: 5 * time.Minute}
	agents := func(string) (*agent.Agent, bool) { return ag, true }
	h.runner = h.newRunner(append(tools.Builtins(), gate), agents, func(c *agent.Config) { c.Clock = clock })
	fake.Enqueue(anthropictest.Blocks(use("b1", "build", `{}`)), anthropictest.Text("Built.", 1))

	done := make(chan *agent.Result, 1)
	go func() { done <- h.turn(agent.TurnRequest{Message: "build it"}, &sink{}) }()
	<-started
	// The build runs 5½ minutes: past the default 5-minute expiry of the
	// hold made (or charged) before its round's model call.
	clock.Advance(5*time.Minute + 30*time.Second)
	if _, err := db.ExpireReservations(ctx); err != nil {
		t.Fatal(err)
	}
	st, err := db.BudgetStatus(ctx, u.ID)
	close(release)
	res := <-done
	if err != nil {
		t.Fatal(err)
	}
	if st.TokensReserved == 0 {
		t.Fatalf("the sweeper released the running turn's hold: %+v", st)
	}
	if res.StopReason != coachd.TurnEndTurn {
		t.Fatalf("stop %s %v", res.StopReason, res.Err)
	}
	h.mustSettled(res, coachd.ReservationFinalized)
}
