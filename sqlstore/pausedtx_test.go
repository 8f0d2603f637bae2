package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestPausedReplicaFreesLocksPG: a replica paused (SIGSTOP, a frozen VM,
// a network partition) in the middle of a write transaction holds the
// user's row lock with a connection the server still sees open; another
// replica's writes of that user (a settlement, an admission) waited for
// it for as long as the pause, hours for a partition until TCP keepalive.
// The store's connections end a transaction left idle for
// IdleInTransaction, so the other replica's write goes through.
func TestPausedReplicaFreesLocksPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a := MustOpen(t, dsn, newClock())
	b := MustOpen(t, dsn, newClock())
	u := budgetUser(t, a, 1000)
	res, err := b.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 300})
	if err != nil {
		t.Fatal(err)
	}
	// Replica a, in a transaction holding the user's lock, pauses.
	paused, err := a.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer paused.Rollback()
	if _, err := paused.ExecContext(ctx, `SELECT id FROM users WHERE id = $1 FOR UPDATE`, u.ID); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 3*sqlstore.IdleInTransaction)
	defer cancel()
	start := time.Now()
	if _, err := b.Finalize(wctx, u.ID, res.ID, 120); err != nil {
		t.Fatalf("Finalize behind a paused replica's lock, after %v: %v", time.Since(start).Round(time.Second), err)
	}
	mustStatus(t, b, u.ID, 120, 0)
}
