package sqlstore

import (
	"context"
	"database/sql"
	"sync"
	"sync/atomic"
)

// Checkpointing on SQLite. A WAL checkpoint copies the pages the commits
// appended to the WAL into the database file, with an fsync of each file
// (synchronous=NORMAL syncs nothing at a commit, everything at a
// checkpoint). SQLite's own checkpoint runs inside the COMMIT that takes
// the WAL past wal_autocheckpoint pages: on the writer, so every writer
// queued behind it waited for the copy and both fsyncs (8 % of wall time
// under load, `go tool trace -pprof=syscall`).
//
// Here a connection of its own copies the pages behind the writer, every
// checkpointEvery pages committed, and syncs without holding it up (a
// PASSIVE checkpoint waits for no writer or reader, and none waits for
// it). The WAL starts over only when a write begins with everything in it
// copied and no reader on an older snapshot, which writes arriving all
// the time never leave room for: the writer's own checkpoint, past
// walCheckpointPages pages, still does that, and finds all but the last
// pages copied already. (Writers and readers that never pause can hold
// the restart off in SQLite's own configuration too: the WAL then grows
// until the load lets up; TestWALStartsOverUnderLoad.)
const (
	checkpointEvery    = 1000 // pages committed between background checkpoints
	walCheckpointPages = 8000 // the writer's wal_autocheckpoint (32 MB of 4 KiB pages)
)

// checkpointer runs background checkpoints on its own connection.
type checkpointer struct {
	db    *sql.DB
	pages *atomic.Int64 // pages the writer's commits wrote (writeCounts)
	every int64
	last  int64 // pages at the last kick; the writer's (under group.mu)
	kick  chan struct{}
	stop  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	runs  atomic.Int64 // checkpoints done, for tests and WriteStats
}

func newCheckpointer(db *sql.DB, pages *atomic.Int64, every int64) *checkpointer {
	c := &checkpointer{db: db, pages: pages, every: every, kick: make(chan struct{}, 1), stop: make(chan struct{})}
	c.wg.Go(c.run)
	return c
}

// committed is called by the writer after each COMMIT (holding group.mu):
// once another `every` pages went to the WAL, it wakes the checkpointer,
// without waiting for it.
func (c *checkpointer) committed() {
	if n := c.pages.Load(); n-c.last >= c.every {
		c.last = n
		select {
		case c.kick <- struct{}{}:
		default: // one is due already
		}
	}
}

func (c *checkpointer) run() {
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		// A failure (the file gone, the disk full) is the writer's too,
		// and it reports it; the checkpoint is tried again next time.
		if _, err := c.db.ExecContext(context.Background(), "PRAGMA wal_checkpoint(PASSIVE)"); err == nil {
			c.runs.Add(1)
		}
	}
}

// close stops the checkpointer and closes its connection (once: DB.Close
// may be called again).
func (c *checkpointer) close() error {
	c.once.Do(func() { close(c.stop) })
	c.wg.Wait()
	return c.db.Close()
}
