package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestBudgetEdgeOneSession: an own-loop turn of a session left open after
// a tool round (seed 000 at MAX_STEPS), then that session's next turns
// race at the edge of the budget through the own loop's preflight (which
// settles the open turn) and the stream (which runs under the session's
// lease), beside turns of other sessions. However they interleave, no
// hold is taken past the budget, the open turn is charged what it
// recorded, no hold but its own may be left, and the ledger balances.
func TestBudgetEdgeOneSession(t *testing.T) {
	for name, dsn := range map[string]func(t testing.TB) string{
		"sqlite":   func(t testing.TB) string { return filepath.Join(t.TempDir(), "coachd.db") },
		"postgres": pgtest.NewDatabase,
	} {
		t.Run(name, func(t *testing.T) {
			e, msg, post := mustBudgetEdgeEnv(t, dsn(t))
			var open preflightBody
			if r := e.post(e.alice.key, "/v1/chat/preflight", fmt.Sprintf(`{"message":%q}`, msg), nil, &open); r.status != 200 {
				t.Fatalf("preflight %d %s", r.status, r.body)
			}
			spent := open.EstimatedTokens / 3
			round := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":%d,"messages":[
				{"role":"user","content_blocks":[{"type":"text","text":%q}]},
				{"role":"assistant","content_blocks":[{"type":"tool_use","id":"toolu_1","name":"list_notes","input":{}}]},
				{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_1","content":"[]"}]}]}`,
				open.SessionID, open.ReservationID, spent, msg)
			if r := e.post(e.alice.key, "/v1/chat/record", round, nil, nil); r.status != 200 {
				t.Fatalf("record %d %s", r.status, r.body)
			}
			// Room for what the open turn spent and two holds of a later
			// turn (each a little more than the first: the history grew).
			budget := spent + 2*open.EstimatedTokens + open.EstimatedTokens/2
			if _, err := e.db.UpdateUser(context.Background(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
				t.Fatal(err)
			}
			same := fmt.Sprintf(`{"message":%q,"session_id":%q}`, msg, open.SessionID)
			fresh := fmt.Sprintf(`{"message":%q}`, msg)
			turns := []func() string{
				func() string { return ownLoopTurn(post, same) },
				func() string { return ownLoopTurn(post, same) },
				func() string { st, b := post("/v1/chat/stream", same); return fmt.Sprint(st, " ", len(b)) },
				func() string { st, b := post("/v1/chat/stream", fresh); return fmt.Sprint(st, " ", len(b)) },
				func() string { return ownLoopTurn(post, fresh) },
			}
			var wg sync.WaitGroup
			out := make([]string, len(turns))
			for i, f := range turns {
				wg.Go(func() { out[i] = f() })
			}
			wg.Wait()
			ctx := context.Background()
			drift, err := e.db.CheckLedger(ctx)
			if err != nil || len(drift) > 0 {
				t.Fatalf("ledger drift %+v %v", drift, err)
			}
			st, err := e.db.BudgetStatus(ctx, e.alice.ID)
			if err != nil {
				t.Fatal(err)
			}
			first, err := e.db.FindReservation(ctx, e.alice.ID, open.ReservationID)
			if err != nil {
				t.Fatal(err)
			}
			if first.Charged != spent || st.TokensReserved != first.Held || st.TokensUsed+st.TokensReserved > budget {
				t.Fatalf("used %d reserved %d of a %d budget, the open turn %+v; turns: %q", st.TokensUsed, st.TokensReserved, budget, first, out)
			}
			// Two holds fit at once; a third turn may be admitted too, once
			// a stream turn has ended and settled at what it billed (less
			// than its hold), so the bound is the budget's, checked above.
			admitted := 0
			for _, o := range out {
				if strings.HasPrefix(o, "record 200") || strings.HasPrefix(o, "200") {
					admitted++
				}
			}
			if admitted == 0 {
				t.Fatalf("no turn admitted: %q", out)
			}
		})
	}
}
