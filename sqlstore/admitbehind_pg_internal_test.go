package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// openPostgres opens and migrates a fresh Postgres database (pgtest).
func openPostgres(t *testing.T) *DB {
	t.Helper()
	return openDSN(t, pgtest.NewDatabase(t))
}

// holdCommit makes db's next admission left behind wait before its
// COMMIT: paused is closed once it waits, and closing the gate lets it
// go on.
func holdCommit(db *DB) (paused <-chan struct{}, gate chan<- struct{}) {
	p, g := make(chan struct{}), make(chan struct{})
	var once sync.Once
	db.committing = func(*sql.Tx) { once.Do(func() { close(p); <-g }) }
	return p, g
}

// lockWaiters counts the database's sessions waiting for a row lock.
func lockWaiters(t *testing.T, db *DB) int {
	t.Helper()
	var n int
	if err := db.read.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// On Postgres an admission left behind returns once its statements ran
// and commits on a goroutine of its own: until then nothing of it can be
// read, and a write that needs its user's lock (a second admission of
// the user) waits for the commit, then sees its hold.
func TestAdmitTurnBehindPostgres(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	u, s, a := behindTurn(t, db)
	s2 := &coachd.Session{UserID: u.ID, Agent: "coach"} // before: it takes the user's lock
	if err := db.CreateSession(ctx, s2); err != nil {
		t.Fatal(err)
	}
	paused, gate := holdCommit(db)
	adm, err := db.AdmitTurn(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if adm.Commit == nil {
		t.Fatal("an admission left behind on Postgres came back committed (Commit nil)")
	}
	<-paused
	wantStored(t, db, u, s, false, "before its commit")
	if a.Message.ID == "" || a.Message.Seq != 1 {
		t.Fatalf("the message's id and seq are not filled in: %+v", a.Message)
	}
	// A second admission of the user, on another session: it waits for
	// the first's lock, and once that commits its 800 do not fit in what
	// the first's hold of 300 leaves of 1,000 (alone they would).
	second := make(chan error, 1)
	go func() {
		b := a
		b.Seen, b.Message, b.Behind = s2, nil, false
		b.Reserve.Estimate = 800
		_, err := db.AdmitTurn(ctx, b)
		second <- err
	}()
	for lockWaiters(t, db) == 0 {
		select {
		case err := <-second:
			t.Fatalf("a second admission of the user ran while the first's commit was held: %v", err)
		default:
		}
	}
	commitThrice(t, adm, gate)
	if err := <-second; coachd.ErrorCode(err) != coachd.EBUDGET {
		t.Fatalf("the second admission of 800, after the first's hold of 300 of 1,000: %v, want EBUDGET", err)
	}
	wantStored(t, db, u, s, true, "once committed")
	if err := adm.Commit(); err != nil {
		t.Fatalf("Commit asked again: %v", err)
	}
}

// On Postgres an admission whose commit fails stored nothing and says so
// through Commit: its connection lost before the COMMIT, or its caller's
// context cancelled before it (database/sql then rolls it back). The
// store goes on: the same admission, asked again, is stored.
func TestAdmitTurnBehindFailsPostgres(t *testing.T) {
	for _, c := range []struct {
		name string
		fail func(t *testing.T, db *DB, tx *sql.Tx, cancel context.CancelFunc)
	}{
		{"connection lost", func(t *testing.T, db *DB, tx *sql.Tx, _ context.CancelFunc) {
			var pid int
			if err := tx.QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err != nil {
				t.Error(err)
				return
			}
			if _, err := db.read.Exec(`SELECT pg_terminate_backend($1)`, pid); err != nil {
				t.Error(err)
			}
		}},
		{"context cancelled", func(_ *testing.T, _ *DB, _ *sql.Tx, cancel context.CancelFunc) { cancel() }},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openPostgres(t)
			u, s, a := behindTurn(t, db)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			db.committing = func(tx *sql.Tx) { c.fail(t, db, tx, cancel) }
			adm, err := db.AdmitTurn(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			if err := adm.Commit(); err == nil {
				t.Fatal("Commit of a transaction that could not commit returned nil")
			} else if coachd.ErrorCode(err) != coachd.EINTERNAL {
				t.Fatalf("Commit: %v, want EINTERNAL", err)
			}
			wantStored(t, db, u, s, false, "after a failed commit")
			db.committing = nil
			a.Behind = false
			if _, err := db.AdmitTurn(context.Background(), a); err != nil {
				t.Fatalf("an admission after the failed commit: %v", err)
			}
			wantStored(t, db, u, s, true, "after an admission after the failed commit")
		})
	}
}
