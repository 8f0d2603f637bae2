package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/backoff"
	"github.com/coachd/coachd/internal/envsecret"
	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dialect holds every difference between SQLite and PostgreSQL that the
// store's Go code has to know about. Queries are written once, with "?"
// placeholders, and rebound here; the schema differences live in the
// per-dialect migrations.
type dialect int

const (
	dialectSQLite dialect = iota
	dialectPostgres
)

func (d dialect) String() string {
	if d == dialectPostgres {
		return "postgres"
	}
	return "sqlite"
}

// isPostgresDSN reports whether dsn is a PostgreSQL URL rather than a
// SQLite file path.
func isPostgresDSN(dsn string) bool {
	return strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://")
}

// IdleInTransaction is how long Postgres lets a store's connection sit in
// a transaction without a statement before it ends the session, rolling
// back and freeing its locks: a process paused mid-transaction (SIGSTOP,
// a frozen VM, a network partition) otherwise held them, and every write
// of that user on other replicas waited, until TCP keepalive gave up on
// it, hours later. The store's transactions send their statements back
// to back; a DSN's own idle_in_transaction_session_timeout is kept.
const IdleInTransaction = 10 * time.Second

// MigrateLockTimeout bounds how long a PostgreSQL migration's statement
// waits for a lock another session holds (lock_timeout, unless the URL
// sets its own): waiting, it hung the start silently, and every query
// on the table queued behind its request.
const MigrateLockTimeout = 10 * time.Second

// pgSessionDSN is dsn with the settings the store's sessions need
// (IdleInTransaction) as runtime parameters, unless dsn sets them, and
// its password percent-encoded (envsecret.EscapePassword). A URL net/url
// cannot parse (nor then can pgx) is refused without quoting it.
func pgSessionDSN(dsn string) (string, error) {
	dsn, ok := envsecret.EscapePassword(dsn)
	if !ok {
		return "", coachd.Errorf(coachd.EINVALID, "database: not a valid postgres:// URL "+
			"(write @ : / ? # and %% in a user name or password percent-encoded, @ as %%40)")
	}
	const key = "idle_in_transaction_session_timeout"
	if strings.Contains(dsn, key) {
		return dsn, nil
	}
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	return dsn + sep + key + "=" + strconv.FormatInt(IdleInTransaction.Milliseconds(), 10), nil
}

// otherDSN refuses a DSN meant for a database in a form coachd does not
// read: any other URL scheme (POSTGRES://, postgre://) or libpq's
// key=value pairs. Taken for a SQLite file path, it became a file named
// after it (each replica its own), or an error showing the password.
func otherDSN(dsn string) error {
	if isPostgresDSN(dsn) {
		return nil
	}
	if scheme, _, ok := strings.Cut(dsn, "://"); ok && scheme != "" && strings.Trim(scheme, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-") == "" {
		return coachd.Errorf(coachd.EINVALID, "database: a %s:// URL is not read: use a postgres:// URL or a SQLite file path", scheme)
	}
	if SchemelessURL(dsn) {
		// Not quoted: it holds a password.
		return coachd.Errorf(coachd.EINVALID, "database: user:password@host is a URL without its scheme: write postgres://user:password@host:5432/dbname "+
			"(a SQLite file whose name holds : and @ is written ./name)")
	}
	fields, known := strings.Fields(dsn), false
	for _, f := range fields {
		key, _, ok := strings.Cut(f, "=")
		if !ok {
			return nil
		}
		switch key {
		case "host", "hostaddr", "port", "dbname", "user", "password", "sslmode":
			known = true
		}
	}
	if known {
		return coachd.Errorf(coachd.EINVALID, "database: key=value connection strings are not read: use a URL like postgres://user:password@host:5432/dbname")
	}
	return nil
}

// SchemelessURL reports whether dsn reads as a URL's user:password@host
// without its scheme: a user name (no /) then : before the last @, and
// not a path written as one (/…, ./…).
func SchemelessURL(dsn string) bool {
	if strings.Contains(dsn, "://") || strings.HasPrefix(dsn, "/") || strings.HasPrefix(dsn, ".") {
		return false
	}
	user, _, ok := strings.Cut(dsn, ":")
	return ok && user != "" && !strings.ContainsAny(user, "/ \t\n") && strings.LastIndexByte(dsn, '@') > len(user)
}

// CheckDSN refuses, opening nothing, a DSN Open would refuse for its
// form (another scheme, key=value pairs, a URL without its scheme),
// never quoting it: it may hold a password.
func CheckDSN(dsn string) error { return otherDSN(dsn) }

// sqliteDSN returns the modernc DSN for the SQLite file at path. Every
// connection gets WAL, foreign keys and a busy timeout; writer connections
// take the write lock at BEGIN (BEGIN IMMEDIATE) so a transaction never
// fails with SQLITE_BUSY half-way through when it upgrades from read to
// write, and checkpoint the WAL only past walCheckpointPages (the
// checkpointer does it before, checkpoint.go), and keep their statement
// journal in memory (temp_store), where the group's per-member savepoints
// would otherwise spill it to a temporary file past 64 KiB; reader
// connections refuse writes.
func sqliteDSN(path string, writer bool) string {
	q := []string{
		"_pragma=busy_timeout(10000)",
		"_pragma=foreign_keys(1)",
		"_pragma=synchronous(NORMAL)",
	}
	if writer {
		q = append(q, "_pragma=journal_mode(WAL)", "_txlock=immediate",
			"_pragma=wal_autocheckpoint("+strconv.Itoa(walCheckpointPages)+")",
			"_pragma=temp_store(MEMORY)")
	} else {
		q = append(q, "_pragma=query_only(1)")
	}
	return "file:" + uriPath.Replace(path) + "?" + strings.Join(q, "&")
}

// uriPath escapes what a SQLite URI filename would read as syntax: a path
// holding "#" or "?" must not open a truncated name.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// rebind turns "?" placeholders into "$1", "$2", ... for PostgreSQL. The
// store's queries never contain a literal "?".
func (d dialect) rebind(q string) string {
	if d != dialectPostgres || strings.IndexByte(q, '?') < 0 {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// timeArg is the column value of t: unix microseconds (INTEGER) on SQLite,
// a UTC TIMESTAMPTZ on PostgreSQL.
func (d dialect) timeArg(t time.Time) any {
	if d == dialectPostgres {
		return t.UTC()
	}
	return t.UnixMicro()
}

// attachmentSizes are SQL expressions of how many attachments the
// content_lite column col holds and the bytes of their source data as
// sent (coachd.OmitAttachmentData keeps both): its blocks' and those in
// a tool_result's content (coachd.CountAttachments).
func (d dialect) attachmentSizes(col string) (count, sent string) {
	// Each is the sum over the blocks and over the tool results' blocks.
	both := func(top, inner string) string { return `(` + top + ` + ` + inner + `)` }
	if d == dialectPostgres {
		from := ` FROM json_array_elements(` + col + `::json) j WHERE j->'source'->>'type' = 'omitted')`
		fromInner := ` FROM json_array_elements(` + col + `::json) j, json_array_elements(CASE WHEN j->>'type' = 'tool_result' AND json_typeof(j->'content') = 'array' THEN j->'content' ELSE '[]' END) c
			WHERE c->'source'->>'type' = 'omitted')`
		return both(`(SELECT COUNT(*)`+from, `(SELECT COUNT(*)`+fromInner),
			both(`(SELECT COALESCE(SUM((j->'source'->>'sent')::bigint), 0)`+from, `(SELECT COALESCE(SUM((c->'source'->>'sent')::bigint), 0)`+fromInner)
	}
	from := ` FROM json_each(` + col + `) j WHERE json_extract(j.value, '$.source.type') = 'omitted')`
	// A content element that is no object (text) is not JSON to extract from.
	obj := `CASE WHEN c.type = 'object' THEN c.value END`
	fromInner := ` FROM json_each(` + col + `) j, json_each(j.value, '$.content') c
			WHERE json_extract(j.value, '$.type') = 'tool_result' AND json_extract(` + obj + `, '$.source.type') = 'omitted')`
	return both(`(SELECT COUNT(*)`+from, `(SELECT COUNT(*)`+fromInner),
		both(`(SELECT COALESCE(SUM(json_extract(j.value, '$.source.sent')), 0)`+from, `(SELECT COALESCE(SUM(json_extract(`+obj+`, '$.source.sent')), 0)`+fromInner)
}

// lockMigrations is run first in the migration transaction so that two
// processes never migrate at once. SQLite needs nothing: the transaction
// began IMMEDIATE and so holds the database's write lock.
func (d dialect) lockMigrations() string {
	if d == dialectPostgres {
		// An arbitrary constant key, released at commit or rollback.
		return "SELECT pg_advisory_xact_lock(7468236157296154)"
	}
	return ""
}

// storeTime normalises a timestamp to what the database keeps: UTC,
// microsecond precision. Every timestamp the store hands out goes through it
// so that a value read back equals the value written.
func storeTime(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

// timeCol scans a timestamp column in either dialect's representation.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(src any) error {
	t, err := scanTime(src)
	if err != nil {
		return err
	}
	if t != nil {
		*c.t = *t
	}
	return nil
}

// nullTimeCol scans a nullable timestamp column.
type nullTimeCol struct{ t **time.Time }

func (c nullTimeCol) Scan(src any) error {
	t, err := scanTime(src)
	if err != nil {
		return err
	}
	*c.t = t
	return nil
}

func scanTime(src any) (*time.Time, error) {
	var t time.Time
	switch v := src.(type) {
	case nil:
		return nil, nil
	case int64:
		t = time.UnixMicro(v).UTC()
	case time.Time:
		t = v.UTC()
	default:
		return nil, fmt.Errorf("sqlstore: cannot scan %T into a timestamp", src)
	}
	return &t, nil
}

// Constraint kinds that map to domain error codes.
const (
	violationNone = iota
	violationUnique
	violationCheck
	violationForeignKey
	violationNotNull
	violationText // Postgres: a string it cannot hold as text (invalid UTF-8, NUL)
)

// pingWhileBusy pings a new SQLite writer, whose first connection
// switches the file to WAL. A switch that meets another process's on a
// new file (serve and a command started at once) fails busy at once,
// the busy timeout aside: it is tried again, for up to 10 s.
func pingWhileBusy(ctx context.Context, w *sql.DB) error {
	deadline := time.Now().Add(10 * time.Second)
	return backoff.Do(ctx, time.Millisecond, 100*time.Millisecond, func() (bool, error) {
		err := w.PingContext(ctx)
		var se *sqlite.Error
		return err != nil && errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY && !time.Now().After(deadline), err
	})
}

// storageFailed reports whether a driver error says the database's
// storage failed under it: the disk full (SQLite's FULL, Postgres's
// disk_full) or failing (SQLite's I/O errors, Postgres's io_error).
func storageFailed(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code() & 0xff // the primary code of an extended one
		return c == sqlite3.SQLITE_FULL || c == sqlite3.SQLITE_IOERR
	}
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "53100" || pe.Code == "58030")
}

// connClosed reports whether a Postgres driver error says the
// connection is closed: the server ended it (operator intervention,
// class 57P: a shutdown or pg_terminate_backend; or 25P03, a
// transaction left idle past IdleInTransaction) or it broke (connection
// exception, class 08; nothing sent; EOF): either way the transaction it
// was in was rolled back. A connection that could not
// be made is not one: the server is not there, and asking again at once
// only adds to what it refuses.
func connClosed(err error) bool {
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08") || pe.Code == "25P03"
	}
	return pgconn.SafeToRetry(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// serverGone reports whether a driver error says the Postgres server is
// not there or ended the session before the statement could have taken
// effect: no connection could be made (refused, or refused by a server
// starting or shutting down: 57P03), nothing was sent (SafeToRetry), or
// the server ended the connection (a shutdown, a crash, an operator's
// terminate: 57P01, 57P02; a connection exception, class 08), which
// rolls back what it was doing. A bare EOF, a connection cut with no
// word, is not one: a statement it cut may have committed.
func serverGone(err error) bool {
	if refusal(err) != "" {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "57P") || strings.HasPrefix(pe.Code, "08")
	}
	return pgconn.SafeToRetry(err)
}

// readOnlyServer reports whether a driver error is Postgres refusing a
// write because it is read-only (25006): during a failover, a standby not
// yet promoted or a primary being demoted. The write did nothing.
func readOnlyServer(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25006"
}

// refusal says what is wrong when Postgres refused coachd's connection
// for a reason waiting will not fix, and "" for any other error: the
// login (SQLSTATE class 28: no such role, a wrong password, a role that
// may not log in, pg_hba.conf), a database that does not exist (3D000),
// or a role denied CONNECT on it (42501 at connect).
func refusal(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return ""
	}
	var ce *pgconn.ConnectError
	switch {
	case strings.HasPrefix(pe.Code, "28"):
		return "the database refused coachd's login (no such role, a wrong password, or a role that may not log in): check the user and password of --db"
	case pe.Code == "3D000":
		return "the database named in --db does not exist: create it or check its name"
	case pe.Code == "42501" && errors.As(err, &ce):
		return "the database refused coachd's connection (its role lacks CONNECT on the database): grant it, or check --db"
	}
	return ""
}

// violation classifies a driver error as a constraint violation.
func violation(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() {
		case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
			return violationUnique
		case sqlite3.SQLITE_CONSTRAINT_CHECK:
			return violationCheck
		case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
			return violationForeignKey
		case sqlite3.SQLITE_CONSTRAINT_NOTNULL:
			return violationNotNull
		}
		return violationNone
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "23505":
			return violationUnique
		case "23514":
			return violationCheck
		case "23503":
			return violationForeignKey
		case "23502":
			return violationNotNull
		case "22021", "22P05": // character_not_in_repertoire, untranslatable_character
			return violationText
		}
	}
	return violationNone
}

// lockUser takes the user's row lock first in a budget transaction (see
// budgetTx). On Postgres this orders every budget write of one user behind
// one lock before the foreign-key share locks its inserts take on the same
// row; an UPDATE of a row other transactions hold key-share locks on
// builds a multixact, and under heavy contention Postgres 15 was seen
// failing such a transaction with "new multixact has more than one
// updating member".
// SQLite's single writer already serialises everything.
func lockUser(ctx context.Context, tx *tx, userID string) error {
	if tx.d != dialectPostgres {
		return nil
	}
	var id string
	if err := tx.queryRow(ctx, `SELECT id FROM users WHERE id = ? FOR UPDATE`, userID).Scan(&id); err != nil {
		return dbError(err, "user %q", userID)
	}
	return nil
}
