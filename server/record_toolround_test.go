package server_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestRecordToolRoundKeepsHold: seed 000 records every tool round of its
// own loop without final, then runs the next round. Such a record ended
// in the user's tool results, which the app sends the model next: the
// turn goes on. Record settled it all the same and released the rest of
// its hold, so a second turn was admitted on budget the first was still
// spending, and the two together were charged past the budget. A record
// that ends in tool results now keeps the hold; the turn's last record
// (the reply) settles it.
func TestRecordToolRoundKeepsHold(t *testing.T) {
	for name, dsn := range map[string]func(t testing.TB) string{
		"sqlite":   func(t testing.TB) string { return filepath.Join(t.TempDir(), "coachd.db") },
		"postgres": pgtest.NewDatabase,
	} {
		t.Run(name, func(t *testing.T) {
			e := mustChatEnvDepsOn(t, dsn(t), func(d *server.Deps) { d.Limits = server.Limits{} }, nil)
			key := e.alice.key
			var pf preflightBody
			if r := e.post(key, "/v1/chat/preflight", `{"message":"which rank am I?"}`, nil, &pf); r.status != 200 || pf.ReservationID == "" {
				t.Fatalf("preflight %d %s", r.status, r.body)
			}
			est := pf.EstimatedTokens
			// The budget holds this turn and half another.
			budget := est + est/2
			if _, err := e.db.UpdateUser(context.Background(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
				t.Fatal(err)
			}
			// Round 1, as seed 000's route records it (no final).
			round := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":%d,"estimated_tokens":%d,"is_free_preview":false,"messages":[
				{"role":"user","content_blocks":[{"type":"text","text":"which rank am I?"}],"content_text":"which rank am I?"},
				{"role":"assistant","content_blocks":[{"type":"tool_use","id":"toolu_1","name":"get_datetime","input":{}}],"content_text":""},
				{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":"toolu_1","content":"{\"rank\":\"diamond\"}"}],"content_text":""}]}`,
				pf.SessionID, pf.ReservationID, est/4, est)
			var rr struct {
				State string `json:"state"`
			}
			if r := e.post(key, "/v1/chat/record", round, nil, &rr); r.status != 200 || rr.State != string(coachd.ReservationActive) {
				t.Fatalf("record of a tool round: %d %s, want the reservation kept active", r.status, r.body)
			}
			e.mustLedger(e.alice.ID, est/4, est-est/4)

			// A second turn does not fit beside the first one's hold.
			r := e.post(key, "/v1/chat/preflight", `{"message":"and my rotation?"}`, nil, nil)
			if !budgetRefused(r) {
				t.Fatalf("second preflight while the first turn runs: %d %s, want refused", r.status, r.body)
			}

			// The reply settles the turn, round 1 not stored twice.
			final := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":%d,"estimated_tokens":%d,"is_free_preview":false,"messages":[
				{"role":"user","content_blocks":[{"type":"text","text":""}],"content_text":""},
				{"role":"assistant","content_blocks":[{"type":"text","text":"Diamond."}],"content_text":"Diamond."}]}`,
				pf.SessionID, pf.ReservationID, est, est)
			if r := e.post(key, "/v1/chat/record", final, nil, &rr); r.status != 200 || rr.State != string(coachd.ReservationFinalized) {
				t.Fatalf("final record: %d %s", r.status, r.body)
			}
			e.mustLedger(e.alice.ID, est, 0)
			msgs, err := e.db.History(context.Background(), e.alice.ID, pf.SessionID)
			if err != nil || len(msgs) != 4 {
				t.Fatalf("history %d %v", len(msgs), err)
			}
		})
	}
}
