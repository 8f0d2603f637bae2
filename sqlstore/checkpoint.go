package sqlstore

import (
	"context"
	"database/sql"
	"sync/atomic"
)

// checkpointPages is how many pages the writer appends to the WAL before
// the checkpointer copies them back into the database file: SQLite's own
// wal_autocheckpoint default.
const checkpointPages = 1000

// checkpointer runs SQLite's WAL checkpoints on a connection of its own.
// SQLite's automatic checkpoint runs inside the COMMIT that crossed
// wal_autocheckpoint pages, on the writer, with its fsyncs, while every
// other write transaction queues behind it; the writer's connection has it
// off (sqliteDSN) and the group kicks this one instead. A PASSIVE
// checkpoint runs beside the writer and its readers, and the writer
// starts the WAL over once one has copied everything, as before; what a
// commit makes durable is unchanged (the WAL is written and synced as
// before; a checkpoint only copies committed pages).
type checkpointer struct {
	conn  *sql.DB
	pages *atomic.Int64 // pages the writer's commits wrote
	every int64         // checkpointPages; tests lower it
	last  int64         // pages at the last kick; the group's mu guards it
	kick  chan struct{}
	stop  chan struct{}
	done  chan struct{}
	kicks atomic.Int64 // kicks sent, for tests
	runs  atomic.Int64 // checkpoints run (one per kick sent), for tests
}

func newCheckpointer(conn *sql.DB, pages *atomic.Int64) *checkpointer {
	conn.SetMaxOpenConns(1)
	c := &checkpointer{conn: conn, pages: pages, every: checkpointPages,
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.loop()
	return c
}

// committed is called by the group after each COMMIT (under its mu): once
// every pages, the checkpointer is woken. It never waits.
func (c *checkpointer) committed() {
	if n := c.pages.Load(); n-c.last >= c.every {
		c.last = n
		select {
		case c.kick <- struct{}{}:
			c.kicks.Add(1)
		default: // one is pending already
		}
	}
}

func (c *checkpointer) loop() {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-c.kick:
		}
		// A checkpoint that could not finish (a reader still on old
		// pages, SQLITE_BUSY) is tried again at the next kick, as
		// SQLite's automatic one would be.
		var busy, log, done int64
		_ = c.conn.QueryRowContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &log, &done)
		c.runs.Add(1)
	}
}

// close stops the checkpointer and closes its connection; the last
// connection to close checkpoints what is left, as SQLite always does.
func (c *checkpointer) close() error {
	close(c.stop)
	<-c.done
	return c.conn.Close()
}
