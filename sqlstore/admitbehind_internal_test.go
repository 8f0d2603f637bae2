package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// behindTurn is a user with a budget, a session of theirs and an
// admission for it, with a user message, whose commit is left behind.
func behindTurn(t *testing.T, db *DB) (*coachd.User, *coachd.Session, coachd.TurnAdmission) {
	t.Helper()
	ctx := context.Background()
	u := &coachd.User{Name: "u", TokenBudget: 1000}
	if err := db.CreateUser(ctx, u, "hash-u"); err != nil {
		t.Fatal(err)
	}
	s := &coachd.Session{UserID: u.ID, Agent: "coach"}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	msg := &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hello")}}
	return u, s, coachd.TurnAdmission{Owner: "A", Until: time.Now().Add(time.Minute), Seen: s,
		Reserve: coachd.ReserveRequest{Agent: s.Agent, Estimate: 300}, Message: msg,
		Stream: &coachd.StreamStart{Owner: "proc"}, Behind: true}
}

// wantStored fails the test unless the store, read on a reader's
// connection, holds all of behindTurn's admission (its user message, its
// hold of 300 and its lease) or, without all, none of it.
func wantStored(t *testing.T, db *DB, u *coachd.User, s *coachd.Session, all bool, when string) {
	t.Helper()
	ctx := context.Background()
	h, err := db.History(ctx, u.ID, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	st, err := db.BudgetStatus(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	var owner sql.NullString
	if err := db.read.QueryRowContext(ctx, db.dialect.rebind(`SELECT turn_owner FROM sessions WHERE id = ?`), s.ID).Scan(&owner); err != nil {
		t.Fatal(err)
	}
	n, held, leased := len(h), st.TokensReserved, owner.String != ""
	switch {
	case all && (n != 1 || held != 300 || !leased):
		t.Fatalf("%s the store shows %d messages, %d held, leased %v: want 1, 300, true", when, n, held, leased)
	case !all && (n != 0 || held != 0 || leased):
		t.Fatalf("%s the store shows %d messages, %d held, leased %v: want none of it", when, n, held, leased)
	}
}

// commitThrice opens gate and waits for adm's commit from three
// goroutines at once: each must learn it was stored.
func commitThrice(t *testing.T, adm *coachd.Admission, gate chan<- struct{}) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() { errs[i] = adm.Commit() })
	}
	close(gate)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatalf("Commit: %v", err)
		}
	}
}

// An admission left behind returns once its statements ran: nothing of
// it can be read until its commit, which runs on a goroutine of its own
// and which Commit waits for (as often as asked, from any goroutine).
func TestAdmitTurnBehind(t *testing.T) {
	db := openGrouped(t)
	u, s, a := behindTurn(t, db)
	gate, paused := make(chan struct{}), make(chan struct{})
	var once sync.Once
	db.group.yield = func() { once.Do(func() { close(paused); <-gate }) }
	before := db.group.commits.Load()
	adm, err := db.AdmitTurn(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if adm.Commit == nil {
		t.Fatal("an admission left behind on SQLite came back committed (Commit nil)")
	}
	<-paused // the commit's goroutine, about to take the writer back
	wantStored(t, db, u, s, false, "before its commit")
	if a.Message.ID == "" || a.Message.Seq != 1 {
		t.Fatalf("the message's id and seq are not filled in: %+v", a.Message)
	}
	commitThrice(t, adm, gate)
	if got := db.group.commits.Load() - before; got != 1 {
		t.Fatalf("the admission took %d commits, want 1", got)
	}
	wantStored(t, db, u, s, true, "once committed")
	if err := adm.Commit(); err != nil {
		t.Fatalf("Commit asked again: %v", err)
	}
}

// A write that begins while an admission's commit is behind joins its
// group: one COMMIT stores both, and each learns it.
func TestAdmitTurnBehindJoined(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	_, _, a := behindTurn(t, db)
	var other error
	hooked := make(chan struct{})
	passes := 0 // the writer's goroutines take turns: no lock needed
	db.group.yield = func() {
		if passes++; passes == 1 {
			other = db.CreateUser(ctx, &coachd.User{Name: "other", TokenBudget: 10}, "hash-other")
			close(hooked)
		}
	}
	before := db.group.commits.Load()
	adm, err := db.AdmitTurn(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Commit(); err != nil {
		t.Fatal(err)
	}
	<-hooked
	if other != nil {
		t.Fatal(other)
	}
	if got := db.group.commits.Load() - before; got != 1 {
		t.Fatalf("the admission and the write that joined it took %d commits, want 1", got)
	}
}

// An admission whose commit fails stored nothing, and says so through
// Commit: here the group it is in cannot commit (a write that joined it
// broke a foreign key, checked at COMMIT), and the session, the budget
// and the lease are as before.
func TestAdmitTurnBehindFails(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	u, s, a := behindTurn(t, db)
	var joined error
	hooked := make(chan struct{})
	passes := 0
	db.group.yield = func() {
		if passes++; passes == 1 {
			defer close(hooked)
			_, joined = writeTx(ctx, db, func(tx *tx) (struct{}, error) {
				if _, err := tx.exec(ctx, `PRAGMA defer_foreign_keys = ON`); err != nil {
					return struct{}{}, err
				}
				_, err := tx.exec(ctx, `INSERT INTO sessions (id, user_id, agent, title, created_at, updated_at) VALUES ('ses_orphan', 'usr_nobody', 'coach', '', ?, ?)`,
					tx.time(tx.now), tx.time(tx.now))
				return struct{}{}, err
			})
		}
	}
	adm, err := db.AdmitTurn(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if err := adm.Commit(); err == nil {
		t.Fatal("Commit of a group that could not commit returned nil")
	}
	<-hooked
	if joined == nil {
		t.Fatal("the write that broke the group was told it was stored")
	}
	wantStored(t, db, u, s, false, "after a failed commit")
	// The writer goes on: the same admission, asked again, is stored.
	db.group.yield = nil
	a.Behind = false
	if _, err := db.AdmitTurn(ctx, a); err != nil {
		t.Fatalf("an admission after the failed group: %v", err)
	}
	wantStored(t, db, u, s, true, "after an admission after the failed group")
}
