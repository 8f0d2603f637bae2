package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestAdmitTurnRoomForReply: a chat turn is admitted only when the session
// has room for its user message and the reply; a session one message short
// of its cap refuses at admission (ECONFLICT, nothing held) rather than
// spending tokens on a reply it cannot store.
func TestAdmitTurnRoomForReply(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			until := clock.Now().Add(time.Minute)
			msg := func() *coachd.Message {
				return &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}
			}
			set := func(n int) *coachd.Session {
				t.Helper()
				if _, err := db.SQL().ExecContext(ctx, rebind(b.name, `UPDATE sessions SET message_count = $1 WHERE id = $2`), n, s.ID); err != nil {
					t.Fatal(err)
				}
				got, err := db.FindSession(ctx, u.ID, s.ID)
				if err != nil {
					t.Fatal(err)
				}
				return got
			}
			a := admission(set(coachd.MaxMessagesPerSession-1), "A", until, 100)
			a.Message = msg()
			_, err := db.AdmitTurn(ctx, a)
			wantCode(t, err, coachd.ECONFLICT)
			mustStatus(t, db, u.ID, 0, 0)
			a = admission(set(coachd.MaxMessagesPerSession-2), "B", until, 100)
			a.Message = msg()
			if _, err := db.AdmitTurn(ctx, a); err != nil {
				t.Fatalf("room for the message and its reply: %v", err)
			}
		})
	}
}
