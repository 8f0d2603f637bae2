// Package sqlstore implements coachd.Store over database/sql, for SQLite
// (modernc.org/sqlite, a file path) and PostgreSQL (pgx, a postgres:// URL).
//
// Every method runs in one transaction: begin, defer Rollback, private
// helpers that take the transaction, commit. Every query on sessions,
// messages and notes is scoped to the caller's user: another user's row is
// ENOTFOUND, exactly like a missing one.
//
// On SQLite, writes go through a single connection (so concurrent writers
// queue in Go instead of failing with SQLITE_BUSY) and begin IMMEDIATE;
// reads use a separate pool of read-only connections, which WAL lets run
// beside the writer.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/coachd/coachd"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"
)

// DB is the store. It is safe for concurrent use.
type DB struct {
	write   *sql.DB // SQLite: one connection; Postgres: the pool
	read    *sql.DB // SQLite: read-only pool; Postgres: same as write
	group   *group  // SQLite: write transactions committed together
	dialect dialect
	clock   coachd.Clock
	budget  coachd.BudgetConfig   // see SetBudgetConfig
	notes   coachd.NoteVocabulary // see SetNoteVocabulary
	obs     coachd.Observer       // see SetObserver
	counts  *writeCounts          // SQLite: the writer's statements and pages
	path    string                // SQLite: the file (Backup)
	share   bool                  // see ShareDatabase

	// committing, when set (tests), runs on a Postgres admission's
	// commit goroutine (commitBehind) before its COMMIT.
	committing func(*sql.Tx)
}

var _ coachd.Store = (*DB)(nil)

// pgMaxConns bounds a Postgres store's connections (one process's).
const pgMaxConns = 32

// Open connects to dsn: a SQLite file path (created if missing) or a
// postgres:// or postgresql:// URL. It does not migrate; call Migrate.
func Open(ctx context.Context, dsn string, clock coachd.Clock) (*DB, error) {
	if dsn == "" || dsn == ":memory:" {
		// Two pools on :memory: would be two databases.
		return nil, coachd.Errorf(coachd.EINVALID, "database: need a file path or a postgres:// URL")
	}
	if err := otherDSN(dsn); err != nil {
		return nil, err
	}
	if clock == nil {
		clock = coachd.SystemClock{}
	}
	db := &DB{clock: clock, notes: coachd.DefaultNoteVocabulary, obs: coachd.NopObserver{}}
	db.SetBudgetConfig(coachd.BudgetConfig{})
	if isPostgresDSN(dsn) {
		db.dialect = dialectPostgres
		pgDSN, err := pgSessionDSN(dsn)
		if err != nil {
			return nil, err
		}
		pool, err := sql.Open("pgx", pgDSN)
		if err != nil {
			return nil, internal(err, "open postgres")
		}
		// As many idle connections as open ones: with fewer, a burst of
		// turns closed the connections it no longer needed the moment
		// it ended and opened new ones for the next, each a backend to
		// start and every statement to plan again. A connection idle
		// for five minutes is closed.
		pool.SetMaxOpenConns(pgMaxConns)
		pool.SetMaxIdleConns(pgMaxConns)
		pool.SetConnMaxIdleTime(5 * time.Minute)
		db.write, db.read = pool, pool
	} else {
		db.dialect, db.path = dialectSQLite, dsn
		if err := createOwnerOnly(dsn); err != nil {
			if perr := sqlitePathError(dsn); perr != nil {
				return nil, perr
			}
			return nil, internal(err, "create sqlite %s", dsn)
		}
		wc, err := newStmtCacheConnector(sqliteDSN(dsn, true), true)
		if err != nil {
			return nil, internal(err, "open sqlite")
		}
		w := sql.OpenDB(wc)
		db.counts = wc.counts
		w.SetMaxOpenConns(1)
		w.SetMaxIdleConns(1)
		w.SetConnMaxLifetime(0)
		w.SetConnMaxIdleTime(0)
		db.write, db.group = w, &group{db: w}
		// Ping the writer first: it switches the file to WAL before any
		// reader opens it.
		if err := pingWhileBusy(ctx, w); err != nil {
			w.Close()
			if perr := sqlitePathError(dsn); perr != nil {
				return nil, perr
			}
			return nil, internal(err, "open sqlite %s", dsn)
		}
		rc, err := newStmtCacheConnector(sqliteDSN(dsn, false), false)
		if err != nil {
			w.Close()
			return nil, internal(err, "open sqlite")
		}
		r := sql.OpenDB(rc)
		n := max(4, runtime.GOMAXPROCS(0))
		r.SetMaxOpenConns(n)
		r.SetMaxIdleConns(n)
		db.read = r
		ck, err := sql.Open("sqlite", sqliteDSN(dsn, true))
		if err != nil {
			db.Close()
			return nil, internal(err, "open sqlite")
		}
		ck.SetMaxOpenConns(1)
		db.group.ckpt = newCheckpointer(ck, &wc.counts.pages, checkpointEvery)
	}
	if err := db.read.PingContext(ctx); err != nil {
		db.Close()
		return nil, internal(err, "connect to %s database", db.dialect)
	}
	return db, nil
}

// createOwnerOnly creates the SQLite file at path, if missing, readable
// and writable by its owner alone: it holds every user's conversations,
// and SQLite would create it (and so its WAL and shared-memory files,
// which take its mode) readable by all under the usual umask 022. A file
// that exists keeps its mode.
func createOwnerOnly(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return f.Close()
}

// Close closes every connection.
func (db *DB) Close() error {
	var err error
	if db.group != nil && db.group.ckpt != nil {
		err = db.group.ckpt.close()
	}
	err = errors.Join(err, db.write.Close())
	if db.read != db.write {
		err = errors.Join(err, db.read.Close())
	}
	return err
}

// Dialect returns "sqlite" or "postgres".
func (db *DB) Dialect() string { return db.dialect.String() }

// WriteStats is what the SQLite writer did since Open (all zero on
// Postgres).
type WriteStats = coachd.WriteStats

// WriteStats reports the writer's counts so far.
func (db *DB) WriteStats() WriteStats {
	if db.group == nil {
		return WriteStats{}
	}
	return WriteStats{Statements: db.counts.stmts.Load(), Transactions: db.group.joined.Load(), Commits: db.group.commits.Load(),
		WALPages: db.counts.pages.Load(), Checkpoints: db.group.ckpt.runs.Load(), Busy: time.Duration(db.group.busy.Load())}
}

// Ping reports whether the database answers, through the readers: on
// SQLite the writer's one connection may be held by a write waiting for
// another process's lock, which a liveness probe must not wait for.
func (db *DB) Ping(ctx context.Context) error { return db.read.PingContext(ctx) }

// SQL returns the handle writes go through, for tests and later packages
// that need raw access. On SQLite it is the single writer connection: a
// caller must not hold a transaction or open rows on it while calling store
// methods, and queries must use that dialect's placeholders.
func (db *DB) SQL() *sql.DB { return db.write }

// tx is a transaction that rebinds placeholders for its dialect and knows
// the time its method started (one clock reading per method).
type tx struct {
	*sql.Tx           // a transaction of its own; nil for a group member or auto
	conn    *sql.Conn // SQLite writes: the writer, in its group's transaction
	d       dialect
	now     time.Time
	kind    string    // read or write, for the observer
	start   time.Time // wall time of begin
	obs     coachd.Observer
	g       *group  // SQLite writes: the group this is a member of
	ended   bool    // a group member committed or rolled back
	auto    *sql.DB // no transaction, each statement commits by itself (beginAuto on Postgres, autoRead)
}

// beginWrite starts a read-write transaction: on SQLite, a member of the
// writer's group (group.go), in a BEGIN IMMEDIATE transaction.
func (db *DB) beginWrite(ctx context.Context) (*tx, error) {
	if db.group == nil {
		return db.begin(ctx, db.write, "write")
	}
	start := time.Now()
	t, err := db.group.join(ctx)
	if err != nil {
		return nil, internal(err, "begin transaction")
	}
	return &tx{conn: t, d: db.dialect, now: storeTime(db.clock.Now()), kind: "write", start: start, obs: db.obs, g: db.group}, nil
}

// beginAuto is, on Postgres, a tx whose statements run on the pool and
// each commit by themselves: no BEGIN and no COMMIT, two round trips
// fewer. It is for methods of one statement, or of statements that need
// no common snapshot and no common outcome (Postgres runs a transaction
// READ COMMITTED, so each statement of one sees its own snapshot anyway).
// On SQLite it is beginRead, or beginWrite when write is set. Nothing
// rolls back: a method with more than one write must not use it, and
// retry (which runs fn again after a rolled-back attempt) is safe around
// it only while fn's first statement is its only write.
func (db *DB) beginAuto(ctx context.Context, write bool) (*tx, error) {
	if db.dialect != dialectPostgres {
		if write {
			return db.beginWrite(ctx)
		}
		return db.beginRead(ctx)
	}
	kind := "read"
	if write {
		kind = "write"
	}
	return &tx{d: db.dialect, now: storeTime(db.clock.Now()), kind: kind, start: time.Now(), obs: db.obs, auto: db.write}, nil
}

// autoRead is a tx without a transaction on the read pool, for a method
// whose one statement is atomic by itself, on either dialect.
func (db *DB) autoRead() *tx {
	return &tx{d: db.dialect, now: storeTime(db.clock.Now()), kind: "read", start: time.Now(), obs: db.obs, auto: db.read}
}

// reread runs read, statements of a method that only reads on the pool
// without a transaction (autoRead, beginAuto), again while its error says
// the connection closed (connClosed), as begin does BEGIN: a read
// changes nothing, and the pool may hold that many closed connections.
func reread[T any](ctx context.Context, read func() (T, error)) (T, error) {
	v, err := read()
	for i := 0; err != nil && i < pgMaxConns && connClosed(err) && ctx.Err() == nil; i++ {
		v, err = read()
	}
	return v, err
}

// beginRead starts a transaction for a method that only reads.
func (db *DB) beginRead(ctx context.Context) (*tx, error) {
	return db.begin(ctx, db.read, "read")
}

func (db *DB) begin(ctx context.Context, pool *sql.DB, kind string) (*tx, error) {
	start := time.Now()
	t, err := pool.BeginTx(ctx, nil)
	// A pooled connection the server closed (a restart or failover, an
	// administrator's pg_terminate_backend) is not known closed until
	// used: its BEGIN, which did nothing, fails, and it leaves the pool.
	// Begin again on another, for as many as the pool may hold.
	for i := 0; err != nil && i < pgMaxConns && connClosed(err) && ctx.Err() == nil; i++ {
		t, err = pool.BeginTx(ctx, nil)
	}
	if err != nil {
		return nil, internal(err, "begin transaction")
	}
	return &tx{Tx: t, d: db.dialect, now: storeTime(db.clock.Now()), kind: kind, start: start, obs: db.obs}, nil
}

// SetObserver reports committed transactions' latency to o (metrics).
// Call it before the store is used.
func (db *DB) SetObserver(o coachd.Observer) { db.obs = o }

func (tx *tx) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	ctx, on := tx.on(ctx)
	return on.ExecContext(ctx, tx.d.rebind(q), args...)
}

func (tx *tx) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	ctx, on := tx.on(ctx)
	return on.QueryContext(ctx, tx.d.rebind(q), args...)
}

func (tx *tx) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	ctx, on := tx.on(ctx)
	return on.QueryRowContext(ctx, tx.d.rebind(q), args...)
}

// runner is what a statement runs on: a pool, a connection or a Tx.
type runner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// on returns what tx's statements run on, and the context they run
// under. A group member's statements are not interrupted by its caller's
// cancellation: SQLite rolls back the whole transaction when a write is
// interrupted, which would undo the other members' work. Nor is a single
// statement on the SQLite read pool (autoRead, a lookup by key): watching
// a context costs the driver and database/sql a goroutine each, for a
// statement of microseconds.
func (tx *tx) on(ctx context.Context) (context.Context, runner) {
	switch {
	case tx.auto != nil && tx.d == dialectSQLite:
		return context.WithoutCancel(ctx), tx.auto
	case tx.auto != nil:
		return ctx, tx.auto
	case tx.conn != nil:
		return context.WithoutCancel(ctx), tx.conn
	}
	return ctx, tx.Tx
}

func (tx *tx) commit() error {
	var err error
	switch {
	case tx.auto != nil: // each statement committed by itself
	case tx.g != nil:
		tx.ended = true
		err = tx.g.commit(context.Background())
	default:
		err = tx.Commit()
	}
	if err != nil {
		return commitError(err)
	}
	tx.obs.DBTransaction(tx.kind, time.Since(tx.start))
	return nil
}

// commitBehind commits like commit but returns at once, with a func that
// waits for the COMMIT (any number of times, from any goroutine): in
// SQLite's group once the transaction's statements are released into
// the group, which commits them; on Postgres the transaction's own
// COMMIT runs on a goroutine (hook, when set, first). Until it is done
// the transaction's row locks are held, so a write that needs them
// waits, and readers see nothing of it. An auto tx has nothing to
// commit and the func is nil.
func (tx *tx) commitBehind(hook func(*sql.Tx)) (func() error, error) {
	var done <-chan error
	switch {
	case tx.auto != nil:
		return nil, tx.commit()
	case tx.g != nil:
		tx.ended = true
		var err error
		if done, err = tx.g.commitBehind(context.Background()); err != nil {
			return nil, commitError(err)
		}
	default:
		tx.ended = true // Rollback must not race the COMMIT
		c := make(chan error, 1)
		go func() {
			if hook != nil {
				hook(tx.Tx)
			}
			c <- tx.Tx.Commit()
		}()
		done = c
	}
	return sync.OnceValue(func() error {
		if err := <-done; err != nil {
			return commitError(err)
		}
		tx.obs.DBTransaction(tx.kind, time.Since(tx.start))
		return nil
	}), nil
}

// Rollback undoes the transaction unless it was committed (it is
// deferred by every method); a group member undoes its own work only.
func (tx *tx) Rollback() error {
	if tx.auto != nil {
		return nil // each statement committed by itself
	}
	if tx.g == nil {
		if tx.ended {
			return nil // committing behind (commitBehind)
		}
		return tx.Tx.Rollback()
	}
	if !tx.ended {
		tx.ended = true
		tx.g.rollback(context.Background())
	}
	return nil
}

// time returns a column value for t in the transaction's dialect.
func (tx *tx) time(t time.Time) any { return tx.d.timeArg(t) }

// queryAll runs q in tx and scans every row; what names the read in
// errors.
func queryAll[T any](ctx context.Context, tx *tx, what string, scan func(interface{ Scan(...any) error }) (T, error), q string, args ...any) ([]T, error) {
	rows, err := tx.query(ctx, q, args...)
	if err != nil {
		return nil, dbError(err, "%s", what)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, dbError(err, "%s", what)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(err, "%s", what)
	}
	return out, nil
}

// scanString scans a one-column row of text, for queryAll.
func scanString(row interface{ Scan(...any) error }) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}

// pageOf trims a listing read with limit+1 rows to limit, and returns the
// cursor after its last item when there is more.
func pageOf[T any](list []T, limit int, cursor func(T) string) ([]T, string) {
	if len(list) <= limit {
		return list, ""
	}
	list = list[:limit]
	return list, cursor(list[limit-1])
}
