package sqlstore

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"github.com/jackc/pgx/v5/pgconn"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFS embed.FS

// migration is one embedded schema change. Version is the number the file
// name starts with ("0001_init.sql" is 1).
type migration struct {
	version int64
	name    string
	sql     string
}

// migrations returns the dialect's migrations in version order.
func (d dialect) migrations() ([]migration, error) {
	dir := "migrations/" + d.String()
	entries, err := fs.ReadDir(migrationFS, dir)
	if err != nil {
		return nil, internal(err, "read migrations")
	}
	var ms []migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || !strings.HasSuffix(e.Name(), ".sql") {
			return nil, internal(nil, "migration %s: name must be NNNN_name.sql", e.Name())
		}
		b, err := fs.ReadFile(migrationFS, path.Join(dir, e.Name()))
		if err != nil {
			return nil, internal(err, "read migration %s", e.Name())
		}
		ms = append(ms, migration{version: v, name: e.Name(), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// Migrate applies the embedded migrations that have not been applied yet,
// in order, recording each in schema_migrations. It runs in one transaction
// (both dialects have transactional DDL), serialised across processes by
// the SQLite write lock or a PostgreSQL advisory lock, so running it twice,
// or from two processes at once, is safe.
func (db *DB) Migrate(ctx context.Context) error {
	_, err := db.MigrateApplied(ctx)
	return err
}

// MigrateApplied is Migrate, returning the names of the migrations it
// applied (none: the schema was up to date). On PostgreSQL a statement
// waits for a lock at most MigrateLockTimeout (or the URL's own
// lock_timeout): then the migration is rolled back with an error saying
// what holds it up.
func (db *DB) MigrateApplied(ctx context.Context) ([]string, error) {
	var waited string // the lock_timeout in force
	names, err := db.migrate(ctx, &waited)
	if pe, ok := errors.AsType[*pgconn.PgError](err); ok && pe.Code == "55P03" {
		e := coachd.Errorf(coachd.ETIMEOUT, "migrate: a lock the migration needs was not granted within %s (lock_timeout): another session holds it "+
			"(a long transaction, a pg_dump, a psql session left in BEGIN: see pg_locks and pg_stat_activity); start coachd again once it ends, "+
			"or set a longer lock_timeout in the URL", waited)
		e.Err = pe
		return nil, e
	}
	return names, err
}

func (db *DB) migrate(ctx context.Context, waited *string) ([]string, error) {
	ms, err := db.dialect.migrations()
	if err != nil {
		return nil, err
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()

	if lock := tx.d.lockMigrations(); lock != "" {
		if _, err := tx.exec(ctx, lock); err != nil {
			return nil, internal(err, "migrate: lock")
		}
	}
	if tx.d == dialectPostgres {
		// Set after the advisory lock: a coachd migrating at once is
		// waited for, a session holding a table is not.
		if err := tx.queryRow(ctx, `SELECT set_config('lock_timeout', CASE current_setting('lock_timeout') WHEN '0' THEN ? ELSE current_setting('lock_timeout') END, true)`,
			strconv.FormatInt(MigrateLockTimeout.Milliseconds(), 10)).Scan(waited); err != nil {
			return nil, internal(err, "migrate: set lock_timeout")
		}
	}
	// Checked under the lock: a coachd migrating the same empty database
	// at once has either committed its schema_migrations or not begun.
	foreign, other, tables, err := scanForeign(tx.queryRow(ctx, tx.d.foreignQuery()))
	if err != nil {
		return nil, internal(err, "migrate: read the schema")
	}
	switch {
	case other:
		// Not even shared: its versions are not coachd's.
		e := coachd.Errorf(coachd.ECONFLICT, "the database's schema_migrations table is another migration tool's, not coachd's: not a coachd database")
		e.Err = ErrForeignTool
		return nil, e
	case foreign && !db.share:
		e := coachd.Errorf(coachd.ECONFLICT, "the database holds %d other tables and no coachd schema: not a coachd database", tables)
		e.Err = ErrForeign
		return nil, e
	}
	if _, err := tx.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    BIGINT PRIMARY KEY,
		name       TEXT NOT NULL,
		applied_at TEXT NOT NULL
	)`); err != nil {
		if e := db.cannotCreate(ctx, err); e != nil {
			return nil, e
		}
		return nil, internal(err, "migrate: create schema_migrations")
	}
	// Nothing else here writes to a database migrated already, so a file
	// this process may not write (mode 0444, a read-only volume) passed,
	// and every turn then failed. A statement that changes nothing still
	// needs the write permission.
	if _, err := tx.exec(ctx, `DELETE FROM schema_migrations WHERE 1 = 0`); err != nil {
		if perr := sqlitePathError(db.path); db.path != "" && perr != nil {
			return nil, perr
		}
		return nil, internal(err, "migrate: cannot write the database (read-only?)")
	}
	applied, err := appliedVersions(ctx, tx)
	if err != nil {
		return nil, err
	}
	// A database a newer coachd migrated has tables this binary does not
	// know how to keep consistent: refuse it rather than run on it.
	known := ms[len(ms)-1].version
	for v := range applied {
		if v > known {
			return nil, coachd.Errorf(coachd.ECONFLICT, "the database schema is at version %d, newer than this coachd knows (%d): upgrade coachd", v, known)
		}
	}
	var names []string
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if _, err := tx.exec(ctx, m.sql); err != nil {
			if e := db.cannotCreate(ctx, err); e != nil {
				return nil, e
			}
			return nil, internal(err, "migrate: apply %s", m.name)
		}
		if _, err := tx.exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
			m.version, m.name, tx.now.Format("2006-01-02T15:04:05.000000Z")); err != nil {
			return nil, internal(err, "migrate: record %s", m.name)
		}
		names = append(names, m.name)
	}
	if err := tx.commit(); err != nil {
		return nil, err
	}
	return names, nil
}

func appliedVersions(ctx context.Context, tx *tx) (map[int64]bool, error) {
	rows, err := tx.query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, internal(err, "migrate: read schema_migrations")
	}
	defer rows.Close()
	applied := map[int64]bool{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, internal(err, "migrate: read schema_migrations")
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, internal(err, "migrate: read schema_migrations")
	}
	return applied, nil
}

// cannotCreate explains PostgreSQL's refusal of a migration's statement
// to create a table (nil for any other error): a user without the
// privilege (since PostgreSQL 15 only a database's owner may create
// tables in schema public, and a user given a database it does not own
// fails at start), or a search_path naming no schema that exists.
func (db *DB) cannotCreate(ctx context.Context, err error) error {
	var pe *pgconn.PgError
	if db.dialect != dialectPostgres || !errors.As(err, &pe) || (pe.Code != "42501" && pe.Code != "3F000") {
		return nil
	}
	var user, schema, path string
	// Not in the migration's transaction, which the error aborted.
	if qerr := db.read.QueryRowContext(ctx, `SELECT current_user, coalesce(current_schema(), ''), current_setting('search_path')`).Scan(&user, &schema, &path); qerr != nil {
		return nil
	}
	var e *coachd.Error
	if pe.Code == "3F000" {
		first, _, _ := strings.Cut(path, ",")
		if first = strings.Trim(strings.TrimSpace(first), `"`); first == "$user" {
			first = user
		}
		e = coachd.Errorf(coachd.EINVALID, "no schema of the search_path (%s) exists to create coachd's tables in: CREATE SCHEMA %s (as a user who may), or fix search_path in the URL",
			path, pgIdent(first))
	} else {
		e = coachd.Errorf(coachd.EINVALID, "database user %s may not create coachd's tables in schema %s: GRANT CREATE ON SCHEMA %s TO %s, or make %s the database's owner (PostgreSQL 15 and later let only the owner create tables in public)",
			user, schema, pgIdent(schema), pgIdent(user), pgIdent(user))
	}
	e.Err = err
	return e
}

// pgIdent is name as a PostgreSQL identifier: bare when it can be,
// quoted otherwise.
func pgIdent(name string) string {
	if strings.Trim(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == "" && name != "" && (name[0] < '0' || name[0] > '9') {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// Blank reports whether a SQLite database has no tables at all: made a
// moment ago and not migrated yet. A Postgres database is never blank.
func (db *DB) Blank(ctx context.Context) (bool, error) {
	if db.dialect != dialectSQLite {
		return false, nil
	}
	var n int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master`).Scan(&n); err != nil {
		return false, dbError(err, "read the schema")
	}
	return n == 0, nil
}

// Foreign reports whether the database holds tables but not coachd's
// schema_migrations (none, or another migration tool's): another
// application's, not one coachd has yet to migrate (an empty database is
// not foreign).
func (db *DB) Foreign(ctx context.Context) (bool, error) {
	foreign, _, _, err := scanForeign(db.read.QueryRowContext(ctx, db.dialect.foreignQuery()))
	if err != nil {
		return false, dbError(err, "read the schema")
	}
	return foreign, nil
}

// scanForeign reads foreignQuery's row: other is a schema_migrations
// without coachd's columns (golang-migrate's, dbmate's, Rails'), foreign
// a database with tables and no schema_migrations of coachd's.
func scanForeign(row *sql.Row) (foreign, other bool, tables int, err error) {
	var named, cols int
	if err := row.Scan(&named, &cols, &tables); err != nil {
		return false, false, 0, err
	}
	other = named > 0 && cols < 2
	return other || (named == 0 && tables > 0), other, tables, nil
}

// ErrForeign is the cause of Migrate's refusal of a Foreign database;
// ErrForeignTool, which is ErrForeign too, of one whose schema_migrations
// is another migration tool's (refused even when shared).
var (
	ErrForeign     = errors.New("not a coachd database")
	ErrForeignTool = fmt.Errorf("%w: another migration tool's schema_migrations", ErrForeign)
)

// ShareDatabase lets Migrate install coachd's tables in a Foreign
// database, beside the other application's, which it refuses otherwise.
// Call it before Migrate.
func (db *DB) ShareDatabase() { db.share = true }

// foreignQuery counts the tables named schema_migrations, their columns
// coachd's has (name, applied_at) and all the tables, in the database
// (SQLite) or the current schema (Postgres).
func (d dialect) foreignQuery() string {
	if d == dialectSQLite {
		return `SELECT (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'),
		(SELECT count(*) FROM pragma_table_info('schema_migrations') WHERE name IN ('name', 'applied_at')),
		(SELECT count(*) FROM sqlite_master WHERE type = 'table')`
	}
	return `SELECT count(*) FILTER (WHERE table_name = 'schema_migrations'),
		(SELECT count(*) FROM information_schema.columns WHERE table_schema = current_schema()
			AND table_name = 'schema_migrations' AND column_name IN ('name', 'applied_at')),
		count(*)
		FROM information_schema.tables WHERE table_schema = current_schema()`
}

// CheckMigrations reports whether every embedded migration has been
// applied (readiness): a database another process has not migrated yet,
// or one a newer coachd migrated, is not ready for this binary.
func (db *DB) CheckMigrations(ctx context.Context) error {
	ms, err := db.dialect.migrations()
	if err != nil {
		return err
	}
	tx, err := db.beginRead(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	applied, err := appliedVersions(ctx, tx)
	if err != nil {
		return err
	}
	pending := 0
	for _, m := range ms {
		if !applied[m.version] {
			pending++
		}
	}
	known := ms[len(ms)-1].version
	for v := range applied {
		if v > known {
			return coachd.Errorf(coachd.ECONFLICT, "schema version %d is newer than this coachd knows (%d)", v, known)
		}
	}
	if pending > 0 {
		return coachd.Errorf(coachd.ECONFLICT, "%d migration(s) not applied", pending)
	}
	return nil
}
