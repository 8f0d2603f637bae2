package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func openGrouped(t *testing.T) *DB {
	t.Helper()
	db, _ := openGroupedAt(t)
	return db
}

// openGroupedAt opens and migrates a SQLite file, and returns its path.
func openGroupedAt(t *testing.T) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "c.db")
	return openDSN(t, path), path
}

// openDSN opens and migrates dsn, and closes it when the test ends.
func openDSN(t *testing.T, dsn string) *DB {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, dsn, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}

// holdWriter takes the writer, as a long transaction would, until the
// returned func is called once n callers are queued behind it.
func holdWriter(t *testing.T, db *DB, n int) (releaseWhenQueued func()) {
	db.group.mu.Lock()
	return func() {
		for int(db.group.waiting.Load()) < n {
			runtime.Gosched() // waiting for the callers to queue, observed
		}
		db.group.mu.Unlock()
	}
}

// Writers that queued together share one COMMIT, and every one of them is
// stored when its call returns.
func TestGroupCommitsQueuedWritersOnce(t *testing.T) {
	db := openGrouped(t)
	const n = 40
	before := db.group.commits.Load()
	release := holdWriter(t, db, n)
	var wg sync.WaitGroup
	errs := make([]error, n)
	users := make([]*coachd.User, n)
	for i := range n {
		users[i] = &coachd.User{Name: fmt.Sprint("user-", i), TokenBudget: 10}
		wg.Go(func() { errs[i] = db.CreateUser(context.Background(), users[i], fmt.Sprint("hash-", i)) })
	}
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("user %d: %v", i, err)
		}
		if _, err := db.FindUserByID(context.Background(), users[i].ID); err != nil {
			t.Fatalf("user %d not stored after its call returned: %v", i, err)
		}
	}
	if got := db.group.commits.Load() - before; got != 1 {
		t.Fatalf("%d queued writers took %d commits, want 1", n, got)
	}
}

// A member that fails rolls back its own work only: the others of its
// group are stored, and it gets its own error.
func TestGroupMemberFailureIsolated(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	if err := db.CreateUser(ctx, &coachd.User{Name: "taken"}, "hash-taken"); err != nil {
		t.Fatal(err)
	}
	release := holdWriter(t, db, 3)
	var wg sync.WaitGroup
	a, b, dup := &coachd.User{Name: "a"}, &coachd.User{Name: "b"}, &coachd.User{Name: "x"}
	var errA, errB, errDup error
	wg.Go(func() { errA = db.CreateUser(ctx, a, "hash-a") })
	wg.Go(func() { errDup = db.CreateUser(ctx, dup, "hash-taken") }) // the key hash is unique
	wg.Go(func() { errB = db.CreateUser(ctx, b, "hash-b") })
	release()
	wg.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("the good members failed: %v, %v", errA, errB)
	}
	if coachd.ErrorCode(errDup) != coachd.ECONFLICT {
		t.Fatalf("duplicate key: %v, want a conflict", errDup)
	}
	for _, u := range []*coachd.User{a, b} {
		if _, err := db.FindUserByID(ctx, u.ID); err != nil {
			t.Fatalf("%s not stored: %v", u.Name, err)
		}
	}
	if _, err := db.FindUserByKeyHash(ctx, "hash-taken"); err != nil {
		t.Fatal(err)
	}
	if dup.ID != "" {
		if _, err := db.FindUserByID(ctx, dup.ID); err == nil {
			t.Fatal("the failed member's user was stored")
		}
	}
}

// A caller whose context ended while it queued stores nothing and does
// not stop the group.
func TestGroupCancelledWhileQueued(t *testing.T) {
	db := openGrouped(t)
	cctx, cancel := context.WithCancel(context.Background())
	cancel()
	release := holdWriter(t, db, 2)
	var wg sync.WaitGroup
	var errC, errOK error
	ok := &coachd.User{Name: "ok"}
	wg.Go(func() { errC = db.CreateUser(cctx, &coachd.User{Name: "c"}, "hash-c") })
	wg.Go(func() { errOK = db.CreateUser(context.Background(), ok, "hash-ok") })
	release()
	wg.Wait()
	if errC == nil {
		t.Fatal("a cancelled caller's write went through")
	}
	if errOK != nil {
		t.Fatal(errOK)
	}
	if _, err := db.FindUserByID(context.Background(), ok.ID); err != nil {
		t.Fatal(err)
	}
}

// WriteStats counts what the writer did: a write method is one
// transaction and one commit of its own statements (alone, no savepoint)
// and a few pages; a read counts nothing.
func TestWriteStats(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	before := db.WriteStats()
	u := &coachd.User{Name: "ada", TokenBudget: 10}
	if err := db.CreateUser(ctx, u, "hash-ada"); err != nil {
		t.Fatal(err)
	}
	mid := db.WriteStats()
	if got := mid.Transactions - before.Transactions; got != 1 {
		t.Fatalf("CreateUser: %d transactions, want 1", got)
	}
	if got := mid.Commits - before.Commits; got != 1 {
		t.Fatalf("CreateUser: %d commits, want 1", got)
	}
	// A lone writer takes no savepoint: the name check and the insert.
	if mid.Statements-before.Statements != 2 || mid.WALPages-before.WALPages < 1 {
		t.Fatalf("CreateUser: %+v after %+v: want 2 statements (no SAVEPOINT or RELEASE when alone) and a page", mid, before)
	}
	if mid.Busy <= before.Busy {
		t.Fatalf("CreateUser held the writer for no time: %v, then %v", before.Busy, mid.Busy)
	}
	if _, err := db.FindUserByID(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	if after := db.WriteStats(); after != mid {
		t.Fatalf("a read changed the writer's counts: %+v, then %+v", mid, after)
	}
}

// Busy counts the time the writer is held, from the transaction's begin
// to its COMMIT, and only that: a transaction that holds it for 50 ms
// adds at least 50 ms, and no more than the time the call took.
func TestWriteStatsBusy(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	const hold = 50 * time.Millisecond
	before := db.WriteStats()
	start := time.Now()
	if _, err := writeTx(ctx, db, func(tx *tx) (struct{}, error) {
		time.Sleep(hold) // holding the writer is what is measured
		_, err := tx.exec(ctx, `INSERT INTO users (id, name, api_key_hash, created_at, updated_at) VALUES ('u1', 'ada', 'h1', 0, 0)`)
		return struct{}{}, err
	}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	busy := db.WriteStats().Busy - before.Busy
	if busy < hold || busy > took {
		t.Fatalf("the writer was held %v by a call of %v that held it %v", busy, took, hold)
	}
	// Waiting for the writer is not holding it: the times held are
	// disjoint, so they add up to no more than the wall time, though a
	// second writer waits behind the first as long as it holds.
	before, start = db.WriteStats(), time.Now()
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 2)
	go func() {
		_, err := writeTx(ctx, db, func(tx *tx) (struct{}, error) {
			close(held)
			<-release
			return struct{}{}, nil
		})
		done <- err
	}()
	<-held
	go func() {
		_, err := writeTx(ctx, db, func(tx *tx) (struct{}, error) { return struct{}{}, nil })
		done <- err
	}()
	waitUntil(t, "the second writer to queue", func() bool { return db.group.waiting.Load() == 1 })
	time.Sleep(hold) // the first holds the writer, the second waits
	close(release)
	for range 2 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	took = time.Since(start)
	if busy := db.WriteStats().Busy - before.Busy; busy < hold || busy > took {
		t.Fatalf("two writers in turn held the writer %v in %v (the first held it %v, the second waited as long)", busy, took, hold)
	}
}

// The first member of a transaction takes no savepoint: alone and failing,
// it rolls the whole transaction back; committed, a later member's
// failure (undone to its own savepoint) leaves its work in the COMMIT.
func TestGroupFirstMemberWithoutSavepoint(t *testing.T) {
	db := openGrouped(t)
	g, ctx := db.group, context.Background()
	exec := func(tx *sql.Conn, q string) {
		t.Helper()
		if _, err := tx.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := g.join(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exec(tx, "CREATE TABLE probe (v INTEGER)")
	if err := g.commit(ctx); err != nil {
		t.Fatal(err)
	}
	rows := func() []int {
		t.Helper()
		r, err := db.read.QueryContext(ctx, "SELECT v FROM probe ORDER BY v")
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var out []int
		for r.Next() {
			var v int
			r.Scan(&v)
			out = append(out, v)
		}
		return out
	}

	// Alone and failing: nothing stored, nothing committed, the writer free.
	commits := g.commits.Load()
	tx, _ = g.join(ctx)
	if !g.bare {
		t.Fatal("the first member of a transaction took a savepoint")
	}
	exec(tx, "INSERT INTO probe VALUES (1)")
	g.rollback(ctx)
	if g.tx != nil || g.commits.Load() != commits {
		t.Fatalf("a lone member's rollback left the transaction open (%v) or committed (%d → %d)", g.tx != nil, commits, g.commits.Load())
	}

	// First member committed while another waits; the other fails.
	g.waiting.Add(1) // someone queued: the first member's commit waits for the group
	tx, _ = g.join(ctx)
	exec(tx, "INSERT INTO probe VALUES (2)")
	done := make(chan error, 1)
	go func() { done <- g.commit(ctx) }()
	tx, err = g.join(ctx) // the queued one
	g.waiting.Add(-1)
	if err != nil {
		t.Fatal(err)
	}
	if g.bare {
		t.Fatal("a member joining an open transaction took no savepoint")
	}
	exec(tx, "INSERT INTO probe VALUES (3)")
	g.rollback(ctx) // its own work only; then the group commits
	if err := <-done; err != nil {
		t.Fatalf("the first member: %v", err)
	}
	if got := rows(); len(got) != 1 || got[0] != 2 {
		t.Fatalf("stored %v, want [2]", got)
	}
	// The writer is free again.
	if err := db.CreateUser(ctx, &coachd.User{Name: "after"}, "hash-after"); err != nil {
		t.Fatal(err)
	}
}

// A member whose context ends while its statement runs does not undo the
// others (tx.stmtCtx): SQLite rolls back the whole transaction of an
// INSERT, UPDATE or DELETE it interrupts, and a group's transaction holds
// other callers' writes, released and waiting for the COMMIT. Here a first
// caller writes and waits for the group's COMMIT behind a second, whose
// long DELETE is cancelled midway: the first caller's write is stored.
func TestGroupCancelMidStatementKeepsOthers(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	release := holdWriter(t, db, 2)
	first := &coachd.User{Name: "first"}
	var errFirst error
	var wg sync.WaitGroup
	wg.Go(func() { errFirst = db.CreateUser(ctx, first, "hash-first") })
	for db.group.waiting.Load() < 1 {
		runtime.Gosched() // the first caller queued, observed
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The DELETE's subquery counts to 20,000 (tens of milliseconds): the
	// cancel lands while it runs.
	long := `DELETE FROM notes WHERE id IN (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) SELECT 'n' || x FROM c)`
	wg.Go(func() {
		writeTx(cctx, db, func(tx *tx) (struct{}, error) {
			time.AfterFunc(2*time.Millisecond, cancel)
			_, err := tx.exec(cctx, long)
			return struct{}{}, err
		})
	})
	release() // once both are queued, the first ahead
	wg.Wait()
	if errFirst != nil {
		t.Fatalf("the first caller's write failed with the second's cancel: %v", errFirst)
	}
	if _, err := db.FindUserByID(ctx, first.ID); err != nil {
		t.Fatalf("the first caller's write is not stored: %v", err)
	}
}

// A lone member gives the writer up once before it commits: a write that
// begins meanwhile joins its transaction, and one COMMIT stores both. The
// first member's pass runs the second write whole (which, alone in turn,
// passes once too and then commits the group): the first then finds its
// group committed and returns its result.
func TestGroupLoneMemberWaitsOnePass(t *testing.T) {
	db := openGrouped(t)
	ctx := context.Background()
	second := &coachd.User{Name: "second", TokenBudget: 10}
	var secondErr error
	passes := 0
	db.group.yield = func() {
		passes++
		if passes == 1 {
			secondErr = db.CreateUser(ctx, second, "hash-second")
		}
	}
	before := db.group.commits.Load()
	first := &coachd.User{Name: "first", TokenBudget: 10}
	if err := db.CreateUser(ctx, first, "hash-first"); err != nil {
		t.Fatal(err)
	}
	if secondErr != nil {
		t.Fatal(secondErr)
	}
	if got := db.group.commits.Load() - before; got != 1 || passes != 2 {
		t.Fatalf("two writes took %d commits and %d passes, want 1 and 2", got, passes)
	}
	for _, u := range []*coachd.User{first, second} {
		if _, err := db.FindUserByID(ctx, u.ID); err != nil {
			t.Fatalf("%s not stored after its call returned: %v", u.Name, err)
		}
	}
	// Without a write meanwhile, a lone member commits after its pass.
	db.group.yield = func() { passes++ }
	if err := db.CreateUser(ctx, &coachd.User{Name: "third", TokenBudget: 10}, "hash-third"); err != nil {
		t.Fatal(err)
	}
	if got := db.group.commits.Load() - before; got != 2 || passes != 3 {
		t.Fatalf("a third write: %d commits and %d passes in all, want 2 and 3", got, passes)
	}
}
