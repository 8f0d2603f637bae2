package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestReadOnlyServerUnavailablePG: during a failover the database
// coachd reaches may, for a moment, be read-only: a standby not yet
// promoted (the address moved to it early), the old primary being
// demoted. A write there fails with 25006 ("cannot execute INSERT in a
// read-only transaction"), which came out as 500 internal, not
// retryable: clients gave up, coachd chat among them, on what clears in
// seconds. It is now 503 unavailable, retryable, as a server that
// refuses connections is.
func TestReadOnlyServerUnavailablePG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	db := MustOpen(t, dsn, newClock())
	u := &coachd.User{Name: "alice", TokenBudget: 1000}
	if err := db.CreateUser(ctx, u, "hash-alice"); err != nil {
		t.Fatal(err)
	}
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var name string
	if err := admin.QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	// A hot standby's sessions are read-only; so are this database's
	// new ones, once the pool's are gone.
	if _, err := admin.ExecContext(ctx, `ALTER DATABASE "`+name+`" SET default_transaction_read_only = on`); err != nil {
		t.Fatal(err)
	}
	closePool(t, db, dsn)
	err = db.CreateSession(ctx, &coachd.Session{UserID: u.ID, Agent: "coach", Title: "t"})
	var ce *coachd.Error
	if !errors.As(err, &ce) || ce.Code != coachd.EUNAVAILABLE || !ce.Retryable || ce.RetryAfter <= 0 {
		t.Fatalf("a write to a read-only server: %v, want unavailable, retryable, with a retry after", err)
	}
	// Reading goes on.
	if _, _, err := db.ListSessions(ctx, u.ID, coachd.Page{}); err != nil {
		t.Errorf("reading from the read-only server: %v", err)
	}
}
