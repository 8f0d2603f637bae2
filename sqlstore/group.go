package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxGroup bounds how many write transactions share one commit, so the
// first of them does not wait behind an endless line.
const maxGroup = 64

// group commits SQLite write transactions together. SQLite has one
// writer: concurrent write transactions queue for it, and each paid its
// own BEGIN IMMEDIATE and COMMIT (the WAL append of every page it
// touched). A group runs the queued transactions one after another inside
// one real transaction, each in a savepoint of its own, and commits once
// when no one else is waiting. A member whose work fails rolls back to its
// savepoint and leaves the others untouched; a member's commit returns
// only once the group's COMMIT is done, with its result, so durability is
// exactly as before: a write reported stored is committed.
type group struct {
	db      *sql.DB
	mu      sync.Mutex    // held by the member running statements
	waiting atomic.Int32  // callers blocked on mu
	tx      *sql.Conn     // the writer, in the open transaction; nil between groups
	bare    bool          // the running member began tx and took no savepoint
	members []chan error  // released savepoints waiting for the COMMIT
	ended   uint64        // groups ended (committed or rolled back); under mu
	yield   func()        // a lone member's pass before it commits: runtime.Gosched, tests' own
	since   time.Time     // when mu was taken; read and written under mu
	busy    atomic.Int64  // nanoseconds mu was held, for WriteStats
	commits atomic.Int64  // COMMITs done, for tests and figures
	joined  atomic.Int64  // members that began, likewise
	ckpt    *checkpointer // copies the WAL into the file behind the commits
}

// lock takes the writer; unlock gives it up and counts how long it was
// held: the writer's busy time, which concurrent writes queue behind (a
// writer busy most of the time is a server's limit, WriteStats.Busy).
func (g *group) lock() {
	g.mu.Lock()
	g.since = time.Now()
}

func (g *group) unlock() {
	g.busy.Add(int64(time.Since(g.since)))
	g.mu.Unlock()
}

// join waits for the writer and opens a savepoint in the group's
// transaction (beginning one if none is open).
func (g *group) join(ctx context.Context) (*sql.Conn, error) {
	g.waiting.Add(1)
	g.lock()
	g.waiting.Add(-1)
	if err := ctx.Err(); err != nil {
		g.pass()
		return nil, err
	}
	// Not the caller's context: the transaction outlives it, and a
	// statement interrupted by its caller would roll back the others'.
	ctx = context.WithoutCancel(ctx)
	if g.tx == nil {
		t, err := g.begin(ctx)
		if err != nil {
			g.unlock()
			return nil, err
		}
		// The first member needs no savepoint: nothing else is in the
		// transaction yet, so undoing it is rolling the whole back (a
		// lone writer, the common case, saves two statements).
		g.tx, g.bare = t, true
	} else if _, err := g.tx.ExecContext(ctx, "SAVEPOINT member"); err != nil {
		g.abort(err)
		return nil, err
	}
	g.joined.Add(1)
	return g.tx, nil
}

// begin takes the writer's connection and begins a transaction on it. The
// transaction is SQL on a connection, not a database/sql Tx: a Tx's
// context is always cancellable, and database/sql then watches every
// query run in it with a goroutine of its own (with the driver's, about
// 2 % of coachd's CPU under load, BENCHMARKS.md).
func (g *group) begin(ctx context.Context) (*sql.Conn, error) {
	c, err := g.db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if err := control(ctx, c, "BEGIN IMMEDIATE"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// control runs a transaction's BEGIN, COMMIT or ROLLBACK on c, not
// counted as a statement (WriteStats counts the work in transactions).
func control(ctx context.Context, c *sql.Conn, q string) error {
	return c.Raw(func(dc any) error {
		cc, ok := dc.(*cachingConn)
		if !ok {
			return fmt.Errorf("sqlstore: the writer's connection is a %T, not the statement cache's", dc)
		}
		return cc.control(ctx, q)
	})
}

// finish commits (or, with commit false, rolls back) the open transaction
// and gives the connection back. A COMMIT that fails is rolled back, so
// the connection goes back to the pool outside any transaction.
func (g *group) finish(commit bool) error {
	ctx := context.Background()
	var err error
	if commit {
		err = control(ctx, g.tx, "COMMIT")
	}
	if !commit || err != nil {
		if rerr := control(ctx, g.tx, "ROLLBACK"); rerr != nil && err == nil {
			err = rerr
		}
	}
	return errors.Join(err, g.tx.Close())
}

// release ends the member's statements: its savepoint released, it
// waits on the returned channel for the group's COMMIT. Callers hold mu;
// a release that fails has aborted the group (and given mu up).
func (g *group) release(ctx context.Context) (chan error, error) {
	if g.bare {
		g.bare = false
	} else if _, err := g.tx.ExecContext(context.WithoutCancel(ctx), "RELEASE member"); err != nil {
		g.abort(err)
		return nil, err
	}
	done := make(chan error, 1)
	g.members = append(g.members, done)
	return done, nil
}

// commit releases the member's savepoint and waits for the group's
// COMMIT: done here when no one else is waiting (or the group is full),
// else by a later member.
func (g *group) commit(ctx context.Context) error {
	done, err := g.leave(ctx, false)
	if err != nil {
		return err
	}
	return <-done
}

// commitBehind is commit without the wait: it returns once the member's
// savepoint is released, with the channel its COMMIT's result comes on.
func (g *group) commitBehind(ctx context.Context) (<-chan error, error) {
	return g.leave(ctx, true)
}

// leave releases the member's savepoint and sees the group's COMMIT done:
// by a member waiting for the writer when there is one, else by this
// one, now when the group is full, else after giving the writer up for
// one pass of the scheduler, so writes about to begin (another turn's,
// decoded and ready) join this commit rather than pay one of their own.
// Under load the pass took commits from 2.5 to about 1.6 a tool turn
// (BENCHMARKS.md). Meanwhile the group stays open: a member that joins
// commits it, or leaves that to a later one, as always. With behind, a
// lone member's pass and COMMIT run on a goroutine of their own (its
// start is the pass) and leave returns at once.
func (g *group) leave(ctx context.Context, behind bool) (chan error, error) {
	done, err := g.release(ctx)
	if err != nil {
		return nil, err
	}
	if !g.lone() {
		g.handOn()
		return done, nil
	}
	groups := g.ended
	g.unlock()
	if behind {
		go g.commitAlone(groups, true)
	} else {
		g.commitAlone(groups, false)
	}
	return done, nil
}

// lone reports whether the member that just released its savepoint is
// the last in line, with room left in the group. Callers hold mu.
func (g *group) lone() bool { return g.waiting.Load() == 0 && len(g.members) < maxGroup }

// handOn leaves the group's COMMIT to a member waiting for the writer,
// or does it now when none is (or the group is full). Callers hold mu.
func (g *group) handOn() {
	if g.waiting.Load() > 0 && len(g.members) < maxGroup {
		g.unlock()
	} else {
		g.flush()
	}
}

// commitAlone takes the writer back, after its pass, for a lone member
// that gave it up while groups groups had ended, and commits, unless its
// group ended meanwhile (committed, or rolled back, with the member in
// it). On a goroutine of its own (behind), its start was the pass.
func (g *group) commitAlone(groups uint64, behind bool) {
	switch {
	case g.yield != nil:
		g.yield()
	case !behind:
		runtime.Gosched()
	}
	g.lock()
	if g.ended != groups {
		g.unlock()
		return
	}
	g.handOn()
}

// rollback undoes the member's work and ends its turn at the writer.
func (g *group) rollback(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	if g.bare {
		g.abort(nil) // its own transaction: no member waits on it
		return
	}
	if _, err := g.tx.ExecContext(ctx, "ROLLBACK TO member"); err != nil {
		g.abort(err)
		return
	}
	if _, err := g.tx.ExecContext(ctx, "RELEASE member"); err != nil {
		g.abort(err)
		return
	}
	g.pass()
}

// pass ends a member's turn at the writer without joining the commit: the
// next waiting caller goes on in the same transaction, or the group
// commits (or, empty, rolls back) now. Callers hold mu.
func (g *group) pass() {
	switch {
	case g.tx == nil || g.waiting.Load() > 0:
		g.unlock()
	case len(g.members) == 0:
		_ = g.finish(false)
		g.tx = nil
		g.unlock()
	default:
		g.flush()
	}
}

// flush commits the group and tells every member. Callers hold mu.
func (g *group) flush() {
	err := g.finish(true)
	g.commits.Add(1)
	if g.ckpt != nil {
		g.ckpt.committed()
	}
	g.end(err)
}

// abort rolls back a transaction that failed as a whole (a savepoint that
// could not be taken, released or undone): every member waiting for it
// learns it was not stored. Callers hold mu.
func (g *group) abort(err error) {
	_ = g.finish(false)
	g.end(err)
}

func (g *group) end(err error) {
	for _, m := range g.members {
		m <- err
	}
	g.tx, g.members, g.bare = nil, nil, false
	g.ended++
	g.unlock()
}
