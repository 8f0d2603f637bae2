package sqlstore

import (
	"context"
	"database/sql"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestIdleInTransactionRetriedPG: a transaction the server ended for
// sitting idle past idle_in_transaction_session_timeout (a process
// paused mid-transaction: SIGSTOP, a frozen VM) was rolled back with its
// connection, as one ended by a shutdown is (57P01): it runs again on
// another connection. Its next statement failed with 25P03, which was
// not taken for a closed connection, and the write failed (a turn's
// settlement left its hold, a user message was refused with a 500).
func TestIdleInTransactionRetriedPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	// A short timeout (the DSN's own is kept) stands for the store's 10 s.
	db := openDSN(t, dsn+"&idle_in_transaction_session_timeout=100")
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	u := &coachd.User{Name: "idle", TokenBudget: 1000}
	if err := db.CreateUser(ctx, u, "hash-idle"); err != nil {
		t.Fatal(err)
	}

	attempts := 0
	_, err = writeTx(ctx, db, func(tx *tx) (struct{}, error) {
		attempts++
		if err := lockUser(ctx, tx, u.ID); err != nil {
			return struct{}{}, err
		}
		if attempts == 1 {
			// The process stops here; the server ends its session.
			var pid int
			if err := tx.queryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				return struct{}{}, err
			}
			for gone := false; !gone; {
				if err := admin.QueryRowContext(ctx, `SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&gone); err != nil {
					t.Fatal(err)
				}
			}
		}
		_, err := tx.exec(ctx, `UPDATE users SET tokens_used = tokens_used + 1 WHERE id = ?`, u.ID)
		return struct{}{}, err
	})
	if err != nil {
		t.Fatalf("a write whose transaction the server ended for idling: %v", err)
	}
	if attempts != 2 {
		t.Fatalf("%d attempts, want 2", attempts)
	}
	var used int64
	if err := admin.QueryRowContext(ctx, `SELECT tokens_used FROM users WHERE id = $1`, u.ID).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if used != 1 {
		t.Fatalf("tokens_used = %d, want 1 (the write once)", used)
	}
}
