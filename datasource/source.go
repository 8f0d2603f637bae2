package datasource

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/filecap"
	_ "github.com/jackc/pgx/v5/stdlib" // the postgres driver
	_ "modernc.org/sqlite"             // the sqlite driver
)

type dialect uint8

const (
	sqliteDialect dialect = iota
	postgresDialect
)

// Source is one opened data file: its connections and what it declares,
// checked against the database.
type Source struct {
	name    string // the file's base name
	spec    *spec
	dialect dialect
	ro      *sql.DB // reads: read-only
	rw      *sql.DB // actions; nil without any
	tables  []*table
}

// table is a declared table with its columns as the database has them.
type table struct {
	src         *Source
	name        string
	description string
	scope       string
	shared      bool
	read        []string          // readable columns, declared order
	types       map[string]string // every column of the table → type
	required    map[string]bool   // columns an insert must set
	write       map[string]bool   // columns some action writes
	written     []string          // the same, in the order declared
}

func (t *table) readable(c string) bool { return slices.Contains(t.read, c) }

// open opens the connections of s and checks its declarations against
// the database; problems go to probs. A relative sqlite: path is taken
// from fileDir, the data file's directory inside the pack's root.
func (s *Source) open(ctx context.Context, root *os.Root, fileDir string, probs *problems) {
	dsn := s.spec.dsn
	var roDSN, rwDSN, driver string
	switch {
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		s.dialect, driver = postgresDialect, "pgx"
		pg, err := pgDSN(dsn, root, fileDir)
		if err != nil {
			probs.add(s.spec.dsnLine, "dsn: %v", err)
			return
		}
		roDSN, rwDSN = pg, pg
	case strings.HasPrefix(dsn, "sqlite:"), strings.HasPrefix(dsn, "file:"):
		s.dialect, driver = sqliteDialect, "sqlite"
		file := strings.TrimPrefix(strings.TrimPrefix(dsn, "sqlite:"), "file:")
		if strings.Contains(file, "://") || schemelessURL(file) {
			// Not echoed: the URL may carry a password.
			probs.add(s.spec.dsnLine, "dsn: sqlite: takes a file name, not a URL; write a Postgres DSN as postgres://... without sqlite: "+
				"(a SQLite file whose name holds : and @ is written ./name)")
			return
		}
		if strings.ContainsAny(file, "?#%") || file == "" {
			probs.add(s.spec.dsnLine, "dsn: a SQLite file name without ?, # or %%")
			return
		}
		var err error
		if file, err = packPath(root, fileDir, file); err != nil {
			probs.add(s.spec.dsnLine, "dsn: %s %v", filepath.Base(file), err)
			return
		}
		if st, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
			probs.add(s.spec.dsnLine, "dsn: cannot open %s read-only: no such file (tried %s; a relative sqlite path is relative to the data file's directory)", filepath.Base(file), file)
			return
		} else if err != nil {
			probs.add(s.spec.dsnLine, "dsn: cannot open %s read-only: %v", filepath.Base(file), errors.Unwrap(err))
			return
		} else if !st.Mode().IsRegular() { // a named pipe's open waits for a writer
			probs.add(s.spec.dsnLine, "dsn: %s is not a regular file", filepath.Base(file))
			return
		}
		u := (&url.URL{Scheme: "file", Path: file}).String()
		roDSN = u + "?mode=ro&_pragma=query_only(1)&_pragma=busy_timeout(2000)"
		rwDSN = u + "?mode=rw&_pragma=busy_timeout(5000)&_txlock=immediate"
	default:
		probs.add(s.spec.dsnLine, "dsn must start with sqlite:, file: or postgres://")
		return
	}
	ro, err := openDB(driver, roDSN)
	if err == nil {
		err = ro.PingContext(ctx)
	}
	if err != nil {
		probs.add(s.spec.dsnLine, "dsn: cannot open the database read-only: %s", redact(err, dsn))
		if ro != nil {
			ro.Close()
		}
		return
	}
	ro.SetMaxOpenConns(8)
	s.ro = ro
	if len(s.spec.actions) > 0 {
		rw, err := openDB(driver, rwDSN)
		if err == nil {
			err = rw.PingContext(ctx)
		}
		if err != nil {
			probs.add(s.spec.dsnLine, "dsn: cannot open the database for the actions: %s", redact(err, dsn))
		} else {
			rw.SetMaxOpenConns(4)
			s.rw = rw
		}
	}
	s.check(ctx, probs)
}

// schemelessURL reports whether a sqlite: file name reads as a URL's
// user:password@host without its scheme (as sqlstore.SchemelessURL):
// a user name (no /) then : before the last @, not written as a path.
func schemelessURL(file string) bool {
	if strings.HasPrefix(file, "/") || strings.HasPrefix(file, ".") {
		return false
	}
	user, _, ok := strings.Cut(file, ":")
	return ok && user != "" && !strings.ContainsAny(user, "/ \t\n") && strings.LastIndexByte(file, '@') > len(user)
}

// packPath is the absolute path of a sqlite: file: an absolute one is
// the operator's choice of the app's database; a relative one is taken
// from fileDir and must stay inside the pack (root), through its links
// too (filecap.ErrLeadsOut).
func packPath(root *os.Root, fileDir, file string) (string, error) {
	if !filepath.IsAbs(file) {
		name := filepath.Join(fileDir, file)
		if !filepath.IsLocal(name) {
			return file, errors.New("leads out of the pack directory (a relative sqlite: path stays inside it; name a database elsewhere by its absolute path)")
		}
		if _, err := root.Stat(name); errors.Is(filecap.InRoot(err), filecap.ErrLeadsOut) {
			return file, filecap.ErrLeadsOut
		}
		file = filepath.Join(root.Name(), name)
	}
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	return file, nil
}

// redact keeps a DSN's password out of an error.
func redact(err error, dsn string) string {
	msg := err.Error()
	if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			msg = strings.ReplaceAll(msg, pw, "***")
		}
	}
	return msg
}

// columns introspects a table: column → type, empty when there is none,
// and the columns an insert must set: NOT NULL without a default, and
// not filled by the database (SQLite's INTEGER PRIMARY KEY, a Postgres
// identity or generated column).
func (s *Source) columns(ctx context.Context, name string) (map[string]string, map[string]bool, error) {
	q := `SELECT name, type, "notnull" AND dflt_value IS NULL AND NOT (pk > 0 AND lower(type) = 'integer')
		FROM pragma_table_info(?)`
	if s.dialect == postgresDialect {
		q = `SELECT column_name, data_type,
			is_nullable = 'NO' AND column_default IS NULL AND is_identity = 'NO' AND is_generated = 'NEVER'
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`
	}
	rows, err := s.ro.QueryContext(ctx, q, name)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	types, required := map[string]string{}, map[string]bool{}
	for rows.Next() {
		var c, t string
		var req bool
		if err := rows.Scan(&c, &t, &req); err != nil {
			return nil, nil, err
		}
		types[c] = strings.ToLower(t)
		required[c] = req
	}
	return types, required, rows.Err()
}

// check introspects the declared tables and checks the queries and
// actions against them.
func (s *Source) check(ctx context.Context, probs *problems) {
	byName := map[string]*table{}
	for _, ts := range s.appTables(ctx, probs) {
		cols, required, err := s.columns(ctx, ts.name)
		if err != nil {
			probs.add(ts.line, "table %s: %v", ts.name, err)
			continue
		}
		if len(cols) == 0 {
			probs.add(ts.line, "table %s is not in the database", ts.name)
			continue
		}
		t := &table{src: s, name: ts.name, description: ts.description, scope: ts.scope, shared: ts.shared,
			types: cols, required: required, write: map[string]bool{}}
		for i, c := range ts.columns {
			if _, ok := cols[c]; !ok {
				probs.add(ts.columnLines[i], "table %s has no column %s", ts.name, c)
				continue
			}
			t.read = append(t.read, c)
		}
		if ts.scope != "" {
			if _, ok := cols[ts.scope]; !ok {
				probs.add(ts.scopeLine, "table %s has no column %s (its scope)", ts.name, ts.scope)
			}
		}
		byName[t.name] = t
		s.tables = append(s.tables, t)
	}
	for _, q := range s.spec.queries {
		t := byName[q.table]
		if t == nil {
			probs.add(q.line, "query %s: table %q is not declared under tables:", q.name, q.table)
			continue
		}
		for _, c := range q.columns {
			if !t.readable(c) {
				probs.add(q.line, "query %s: %s is not a readable column of %s", q.name, c, t.name)
			}
		}
		for c, v := range q.where {
			if !t.readable(c) {
				probs.add(q.line, "query %s: where %s: not a readable column of %s", q.name, c, t.name)
			}
			checkRef(probs, q.line, "query "+q.name, v, q.inputSchema)
		}
		for _, c := range q.orderBy {
			if !t.readable(strings.TrimPrefix(c, "-")) {
				probs.add(q.line, "query %s: order_by %s: not a readable column of %s", q.name, c, t.name)
			}
		}
		if q.limit < 0 || q.limit > s.spec.maxRows {
			probs.add(q.line, "query %s: limit must be 1 to max_rows (%d)", q.name, s.spec.maxRows)
		}
	}
	for _, a := range s.spec.actions {
		t := byName[a.table]
		switch {
		case t == nil:
			probs.add(a.line, "action %s: table %q is not declared under tables:", a.name, a.table)
			continue
		case t.scope == "":
			probs.add(a.line, "action %s: a write needs a user scope: give tables.%s a scope column", a.name, t.name)
			continue
		}
		has := func(c string) bool { _, ok := t.types[c]; return ok }
		for _, as := range a.values {
			switch {
			case !has(as.column):
				probs.add(as.line, "action %s: table %s has no column %s", a.name, t.name, as.column)
			case as.column == t.scope:
				probs.add(as.line, "action %s: coachd sets the scope column %s itself", a.name, t.scope)
			default:
				if !t.write[as.column] {
					t.written = append(t.written, as.column)
				}
				t.write[as.column] = true
			}
			if what := map[string]string{"now": "a timestamp", "uuid": "a UUID"}[as.value.special]; what != "" && s.numeric(t.types[as.column]) {
				// SQLite would store the text in the number column as it
				// is, Postgres refuse every call.
				probs.add(as.line, "action %s: %s is %s: $%s writes %s as text", a.name, as.column, t.types[as.column], as.value.special, what)
			}
			checkRef(probs, as.line, "action "+a.name, as.value, a.inputSchema)
		}
		if a.kind == "insert" {
			// Every call would fail on the database's constraint.
			set := map[string]bool{t.scope: true}
			for _, as := range a.values {
				set[as.column] = true
			}
			for _, c := range slices.Sorted(maps.Keys(t.required)) {
				if t.required[c] && !set[c] {
					probs.add(a.line, "action %s: the insert does not set %s, which is NOT NULL without a default", a.name, c)
				}
			}
		}
		if a.kind == "update" {
			if !has(a.key) {
				probs.add(a.line, "action %s: key: table %s has no column %s", a.name, t.name, a.key)
			}
			for _, m := range a.match {
				if !has(m.column) {
					probs.add(a.line, "action %s: match: table %s has no column %s", a.name, t.name, m.column)
				}
				checkRef(probs, a.line, "action "+a.name, value{ref: m.input}, a.inputSchema)
			}
			for c, v := range a.where {
				if !has(c) {
					probs.add(a.line, "action %s: where: table %s has no column %s", a.name, t.name, c)
				}
				checkRef(probs, a.line, "action "+a.name, v, a.inputSchema)
			}
		}
	}
}

// numeric reports whether a column type holds numbers (SQLite's
// INTEGER, REAL and NUMERIC affinities; Postgres's number types).
func (s *Source) numeric(typ string) bool {
	if s.dialect == postgresDialect {
		return slices.Contains([]string{"smallint", "integer", "bigint", "real", "double precision", "numeric"}, typ)
	}
	for _, n := range []string{"int", "real", "floa", "doub", "numeric", "decimal"} {
		if strings.Contains(typ, n) {
			return true
		}
	}
	return false
}

// checkRef reports a $field that the input schema does not declare.
func checkRef(probs *problems, line int, what string, v value, schema []byte) {
	if v.ref == "" {
		return
	}
	var sc struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(schema, &sc)
	if _, ok := sc.Properties[v.ref]; !ok {
		probs.add(line, "%s: $%s is not a property of its input_schema", what, v.ref)
	}
}

// Close closes the connections.
func (s *Source) Close() error {
	var errs []error
	for _, db := range []*sql.DB{s.ro, s.rw} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	return errors.Join(errs...)
}

// ph returns the n-th (1-based) placeholder.
func (s *Source) ph(n int) string {
	if s.dialect == postgresDialect {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}

// quote quotes an identifier; every identifier was checked against
// identRe and against the database.
func quote(id string) string { return `"` + id + `"` }

// selected is column c as a SELECT list reads it. SQLite's driver turns
// the text of a column declared DATE, DATETIME or TIMESTAMP into a
// time.Time in UTC, so '2026-01-05' would come back as midnight UTC, a
// value no where matches: unary + (a no-op on any value) drops the
// declared type, and the value comes back as stored.
func (s *Source) selected(c string) string {
	if s.dialect == sqliteDialect {
		return "+" + quote(c)
	}
	return quote(c)
}

// shown is column c of t as a result reads it: selected, with text read
// no further than a cell shows (maxCell bytes, so as many letters and
// one more), not a whole long value cut after it crossed the wire. A
// SQLite value is cut only when it is text (a column's declared type
// does not bind what it holds); a Postgres one when its column is text.
func (t *table) shown(c string) string {
	s, n := t.src, maxCell+1
	if s.dialect == sqliteDialect {
		return fmt.Sprintf("CASE WHEN typeof(%s) = 'text' THEN substr(%[1]s, 1, %d) ELSE +%[1]s END", quote(c), n)
	}
	// Not character(n): substr would drop its padding.
	if typ := t.types[c]; typ == "text" || typ == "character varying" {
		return fmt.Sprintf("substr(%s, 1, %d)", quote(c), n)
	}
	return quote(c)
}

// bindable adapts v to column c of t the way SQLite's affinity does by
// itself: Postgres refuses to bind a number or a boolean to a text
// parameter ("unable to encode 123 into text format"), so a code the
// model gives as digits is bound as its text, and 1 or 0 (how SQLite
// apps write booleans) to a boolean as true or false; a list (its JSON
// text) to an array as an array literal.
func (t *table) bindable(c string, v any) any {
	if t.src.dialect != postgresDialect {
		return v
	}
	if n, ok := v.(int); ok { // a literal of the data file
		v = int64(n)
	}
	typ := t.types[c]
	if typ == "array" { // information_schema's data_type of every array, lowered
		if s, ok := v.(string); ok {
			if lit, ok := pgArray(s); ok {
				return lit
			}
		}
		return v
	}
	if typ == "boolean" {
		if n, ok := v.(int64); ok && (n == 0 || n == 1) {
			return n == 1
		}
		return v
	}
	if !strings.HasPrefix(typ, "character") && typ != "text" {
		return v
	}
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	return v
}

// lowered is column c lowercased as text, for like and loose matches;
// the cast lets Postgres compare a number or a date as SQLite does.
func lowered(c string) string { return "lower(CAST(" + quote(c) + " AS TEXT))" }

// likeText is "column c contains s", case aside, with s's wildcards
// taken as text: the column lowercased contains s lowercased, or the
// column contains s as written, since the database's lower() may fold
// ASCII only (SQLite's; Postgres's under the C locale) where Go's folds
// every letter, and "Élysée" would otherwise never match.
func likeText(c, s string, add func(any) string) string {
	lower := add("%" + escapeLike(strings.ToLower(s)) + "%")
	asIs := add("%" + escapeLike(s) + "%")
	return "(" + lowered(c) + " LIKE " + lower + ` ESCAPE '\' OR CAST(` + quote(c) + " AS TEXT) LIKE " + asIs + ` ESCAPE '\')`
}

// begin opens a transaction bounded by the source's time cap; Postgres
// also bounds each statement on the server.
func (s *Source) begin(ctx context.Context, db *sql.DB, readOnly bool) (*sql.Tx, error) {
	opts := &sql.TxOptions{ReadOnly: readOnly && s.dialect == postgresDialect}
	tx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	if s.dialect == postgresDialect {
		ms := s.spec.timeout / time.Millisecond
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SET LOCAL statement_timeout = %d", ms)); err != nil {
			tx.Rollback()
			return nil, err
		}
	}
	return tx, nil
}

// userKey is the value the scope columns hold for u.
func (s *Source) userKey(u *coachd.User) string {
	if u == nil {
		return ""
	}
	switch s.spec.userKey {
	case "name":
		return u.Name
	case "subject":
		if _, sub, ok := strings.Cut(u.ExternalID, "|"); ok {
			return sub
		}
		return ""
	}
	return u.ID
}
