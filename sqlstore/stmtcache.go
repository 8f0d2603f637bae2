package sqlstore

import (
	"context"
	"database/sql/driver"
	"sync/atomic"

	"modernc.org/sqlite"
)

// maxCachedStmts bounds each SQLite connection's statement cache. The
// store's fixed queries number well under a hundred; queries built with a
// variable number of rows (a batch insert) would fill a cache without a
// bound, so the oldest statement is dropped first.
const maxCachedStmts = 256

// stmtCacheConnector opens SQLite connections that prepare each query once
// and keep the compiled statement: modernc otherwise compiles the SQL text
// on every call (sqlite3_prepare_v2 was ~17 % of a loaded server's CPU).
// PostgreSQL needs nothing like it: pgx caches prepared statements per
// connection by default.
type stmtCacheConnector struct {
	driver.Connector
	counts *writeCounts // the writer's (WriteStats); nil: not counted (readers)
}

// writeCounts is what the writer's connection ran and wrote.
type writeCounts struct {
	stmts atomic.Int64 // statements run
	pages atomic.Int64 // pages its commits wrote (to the WAL)
}

// newStmtCacheConnector opens dsn; writer says its work is counted
// (WriteStats).
func newStmtCacheConnector(dsn string, writer bool) (stmtCacheConnector, error) {
	c, err := sqlite.NewConnector(dsn)
	if err != nil {
		return stmtCacheConnector{}, err
	}
	sc := stmtCacheConnector{Connector: c}
	if writer {
		sc.counts = new(writeCounts)
	}
	return sc, nil
}

func (c stmtCacheConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &cachingConn{inner: conn, stmts: map[string]*cachedStmt{}, counts: c.counts}, nil
}

// innerConn is what a modernc connection implements and the store uses.
type innerConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// cachingConn is a connection with a statement cache. database/sql uses a
// connection from one goroutine at a time, so it needs no lock.
type cachingConn struct {
	inner  any // innerConn, checked at use: a failed assertion is a bug
	stmts  map[string]*cachedStmt
	order  []string     // insertion order, for eviction
	counts *writeCounts // nil: not counted
}

type cachedStmt struct {
	s       driver.Stmt
	busy    bool // rows from it are still open
	evicted bool // dropped from the cache while busy: its rows close it
}

func (c *cachingConn) conn() innerConn { return c.inner.(innerConn) }

// stmt returns the cached statement for query, preparing it on first use;
// nil when it is in use by open rows (a query run again while iterating its
// own results), in which case the caller runs the query uncached.
func (c *cachingConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if cs, ok := c.stmts[query]; ok {
		if cs.busy {
			return nil, nil
		}
		return cs, nil
	}
	s, err := c.conn().PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(c.order) >= maxCachedStmts {
		old := c.order[0]
		c.order = c.order[1:]
		if cs := c.stmts[old]; cs.busy {
			cs.evicted = true
		} else {
			cs.s.Close()
		}
		delete(c.stmts, old)
	}
	cs := &cachedStmt{s: s}
	c.stmts[query] = cs
	c.order = append(c.order, query)
	return cs, nil
}

func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	c.count()
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.conn().ExecContext(ctx, query, args)
	}
	return cs.s.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	c.count()
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs == nil {
		return c.conn().QueryContext(ctx, query, args)
	}
	rows, err := cs.s.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		return nil, err
	}
	cs.busy = true
	return &cachedRows{Rows: rows, cs: cs}, nil
}

func (c *cachingConn) Prepare(query string) (driver.Stmt, error) {
	return c.conn().PrepareContext(context.Background(), query)
}

func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.conn().PrepareContext(ctx, query)
}

// count counts one statement on a counted connection.
func (c *cachingConn) count() {
	if c.counts != nil {
		c.counts.stmts.Add(1)
	}
}

func (c *cachingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	t, err := c.conn().BeginTx(ctx, opts)
	if err != nil || c.counts == nil {
		return t, err
	}
	return countingTx{t, c}, nil
}

// countingTx adds the pages its commit wrote to the connector's count.
type countingTx struct {
	driver.Tx
	c *cachingConn
}

func (t countingTx) Commit() error {
	err := t.Tx.Commit()
	t.c.countPages()
	return err
}

// control runs a transaction's BEGIN, COMMIT or ROLLBACK, prepared once
// like any statement but not counted as one; a COMMIT's pages are.
func (c *cachingConn) control(ctx context.Context, q string) error {
	cs, err := c.stmt(ctx, q)
	if err != nil {
		return err
	}
	if cs == nil {
		_, err = c.conn().ExecContext(ctx, q, nil)
	} else {
		_, err = cs.s.(driver.StmtExecContext).ExecContext(ctx, nil)
	}
	if err != nil {
		return err
	}
	if q == "COMMIT" {
		c.countPages()
	}
	return nil
}

// countPages adds the pages written since the last count, a commit's (a
// rollback writes none, a spill of a large one is counted here), to the
// writer's count.
func (c *cachingConn) countPages() {
	if c.counts == nil {
		return
	}
	if s, ok := c.inner.(sqlite.DBStatus); ok {
		if n, _, err := s.Status(sqlite.DBStatusCacheWrite, true); err == nil {
			c.counts.pages.Add(int64(n))
		}
	}
}

func (c *cachingConn) Ping(ctx context.Context) error         { return c.conn().Ping(ctx) }
func (c *cachingConn) ResetSession(ctx context.Context) error { return c.conn().ResetSession(ctx) }
func (c *cachingConn) IsValid() bool                          { return c.conn().IsValid() }

// Close finalizes every cached statement, then closes the connection.
func (c *cachingConn) Close() error {
	for _, cs := range c.stmts {
		cs.s.Close()
	}
	c.stmts, c.order = nil, nil
	return c.conn().Close()
}

// cachedRows frees its statement for reuse when closed.
type cachedRows struct {
	driver.Rows
	cs *cachedStmt
}

func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	r.cs.busy = false
	if r.cs.evicted {
		r.cs.s.Close()
	}
	return err
}
