package datasource

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
)

// Bounds of one query_data request.
const (
	maxConditions = 10
	maxOrderBy    = 3
	maxInList     = 50
	maxValueBytes = 1000
)

// selectSpec is one read, resolved against a table: every identifier in it
// is a declared one.
type selectSpec struct {
	t       *table
	columns []string
	conds   []cond
	orderBy []string // "col" or "-col"
	limit   int
	user    string
}

// cond is one WHERE condition: column op value(s).
type cond struct {
	column string
	op     string // = != < <= > >= like in null notnull
	args   []any
}

// ops maps the operators query_data accepts to SQL.
var ops = map[string]string{
	"=": "=", "eq": "=", "!=": "!=", "ne": "!=", "<": "<", "lt": "<", "<=": "<=", "lte": "<=",
	">": ">", "gt": ">", ">=": ">=", "gte": ">=", "like": "like", "contains": "like", "in": "in",
}

// errBad is a request the model can fix; its text is the tool result.
type errBad struct{ msg string }

func (e errBad) Error() string { return e.msg }

func bad(format string, args ...any) error { return errBad{fmt.Sprintf(format, args...)} }

// parseWhere reads query_data's where: {"column": value} for equality,
// {"column": {"op": value}} otherwise; null is IS NULL, {"!=": null} IS
// NOT NULL. Values are strings, numbers and booleans (lists for "in"),
// always bound as parameters.
func parseWhere(t *table, raw json.RawMessage) ([]cond, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var where map[string]json.RawMessage
	if err := json.Unmarshal(raw, &where); err != nil {
		return nil, bad("where must be an object of column: value")
	}
	if len(where) > maxConditions {
		return nil, bad("where: at most %d conditions", maxConditions)
	}
	var out []cond
	for col, v := range where {
		if !t.readable(col) {
			return nil, bad("where: %q is not a column of %s; columns: %s", clip(col), t.name, strings.Join(t.read, ", "))
		}
		op, arg := "=", v
		if bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil || len(m) != 1 {
				return nil, bad("where.%s: an object must have one operator: {\">=\": 5}", col)
			}
			for k, x := range m {
				op, arg = ops[strings.ToLower(k)], x
				if op == "" {
					return nil, bad("where.%s: unknown operator %q; use = != < <= > >= like in", col, clip(k))
				}
			}
		}
		c := cond{column: col, op: op}
		if op == "in" {
			var list []json.RawMessage
			if err := json.Unmarshal(arg, &list); err != nil || len(list) == 0 || len(list) > maxInList {
				return nil, bad("where.%s: in takes a list of 1 to %d values", col, maxInList)
			}
			for _, x := range list {
				a, err := scalar(col, x)
				if err != nil || a == nil {
					return nil, bad("where.%s: in takes strings, numbers or booleans", col)
				}
				c.args = append(c.args, t.bindable(col, a))
			}
			out = append(out, c)
			continue
		}
		a, err := scalar(col, arg)
		if err != nil {
			return nil, err
		}
		switch {
		case a == nil && op == "=":
			c.op = "null"
		case a == nil && op == "!=":
			c.op = "notnull"
		case a == nil:
			return nil, bad("where.%s: null only compares with = or !=", col)
		case op == "like":
			s, ok := a.(string)
			if !ok {
				return nil, bad("where.%s: like takes a string", col)
			}
			c.args = []any{s}
		default:
			c.args = []any{t.bindable(col, a)}
		}
		out = append(out, c)
	}
	return out, nil
}

// scalar decodes a JSON string, number, boolean or null.
func scalar(col string, raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, bad("where.%s: not a JSON value", col)
	}
	switch x := v.(type) {
	case nil, bool:
		return x, nil
	case string:
		if len(x) > maxValueBytes {
			return nil, bad("where.%s: a value is at most %d bytes", col, maxValueBytes)
		}
		return x, nil
	case json.Number:
		return number(x)
	}
	return nil, bad("where.%s: a value is a string, number, boolean or null", col)
}

// number is a JSON number as a statement argument: an int64, its digits
// for an integer past 64 bits (through a float64 its last digits would
// be zeros: exact in a text or NUMERIC column, a refusal in one that
// cannot hold it), or a float64.
func number(n json.Number) (any, error) {
	if i, err := n.Int64(); err == nil {
		return i, nil
	}
	if s := n.String(); !strings.ContainsAny(s, ".eE") && len(s) <= maxValueBytes {
		return s, nil
	}
	f, err := n.Float64()
	if err != nil || math.IsInf(f, 0) {
		return nil, bad("%s is not a usable number", clip(n.String()))
	}
	return f, nil
}

// escapeLike escapes LIKE's wildcards: the model's text matches as text.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// clip bounds model text quoted back in an error.
func clip(s string) string { return clipTo(s, 60) }

// dbText bounds the refusal of a write quoted in a result: long enough to
// name the constraint and its columns, which the model needs to fix its
// call ("UNIQUE constraint failed: zone_intelligence.market_slug, ...").
func dbText(err error) string { return clipTo(err.Error(), 300) }

func clipTo(s string, n int) string {
	if len(s) > n {
		s = s[:n] + "…"
	}
	return strings.ToValidUTF8(s, "")
}

// sql builds the statement and its arguments, with the column each
// argument is compared with. Identifiers come from the declaration only;
// every value is a parameter.
func (q *selectSpec) sql() (string, []any, []string) {
	s := q.t.src
	var b strings.Builder
	var args []any
	var cols []string
	col := ""
	arg := func(v any) string {
		args, cols = append(args, v), append(cols, col)
		return s.ph(len(args))
	}
	b.WriteString("SELECT ")
	for i, c := range q.columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(q.t.shown(c))
	}
	b.WriteString(" FROM " + quote(q.t.name))
	var where []string
	if !q.t.shared {
		col = q.t.scope
		where = append(where, quote(q.t.scope)+" = "+arg(q.user))
	}
	for _, c := range q.conds {
		col = c.column
		quoted := quote(c.column)
		switch c.op {
		case "null":
			where = append(where, quoted+" IS NULL")
		case "notnull":
			where = append(where, quoted+" IS NOT NULL")
		case "like":
			where = append(where, likeText(c.column, c.args[0].(string), arg))
		case "in":
			ph := make([]string, len(c.args))
			for i, a := range c.args {
				ph[i] = arg(a)
			}
			where = append(where, quoted+" IN ("+strings.Join(ph, ", ")+")")
		default:
			where = append(where, quoted+" "+c.op+" "+arg(c.args[0]))
		}
	}
	if len(where) > 0 {
		b.WriteString(" WHERE " + strings.Join(where, " AND "))
	}
	for i, o := range q.orderBy {
		if i == 0 {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		if c, ok := strings.CutPrefix(o, "-"); ok {
			b.WriteString(quote(c) + " DESC")
		} else {
			b.WriteString(quote(o))
		}
	}
	// One more row than asked says whether the result was cut.
	fmt.Fprintf(&b, " LIMIT %d", q.limit+1)
	return b.String(), args, cols
}

// run reads the rows on the read-only connection within the time cap and
// renders them as the tool result: {"table", "rows": [{col: value}],
// "truncated"}.
func (q *selectSpec) run(ctx context.Context) (string, error) {
	s := q.t.src
	ctx, cancel := context.WithTimeout(ctx, s.spec.timeout)
	defer cancel()
	tx, err := s.begin(ctx, s.ro, true)
	if err != nil {
		if e := timeoutOr(ctx, s, err); e != err {
			// Not even a transaction began: no query was slow, and a
			// narrower one would wait as long.
			return "", bad("the app's database did not answer within %s (down or busy); try again later", s.spec.timeout)
		}
		return "", err
	}
	defer tx.Rollback()
	text, args, cols := q.sql()
	rows, err := tx.QueryContext(ctx, text, args...)
	if err != nil {
		return "", refusedValue(timeoutOr(ctx, s, err), cols)
	}
	defer rows.Close()
	var out bytes.Buffer
	fmt.Fprintf(&out, `{"table":%q,"rows":[`, q.t.name)
	vals := make([]any, len(q.columns))
	ptrs := make([]any, len(vals))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	n, truncated := 0, false
	for rows.Next() {
		if n == q.limit {
			truncated = true
			break
		}
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		row := renderRow(q.t, q.columns, vals)
		if out.Len()+len(row) > MaxResultBytes-64 {
			if n == 0 {
				// Not even one row: "rows": [] would read as none.
				return "", bad("one row of %s with its %d columns is more than a result holds (%d KiB): ask for fewer columns (query_data's columns)",
					q.t.name, len(q.columns), MaxResultBytes>>10)
			}
			truncated = true
			break
		}
		if n > 0 {
			out.WriteByte(',')
		}
		out.Write(row)
		n++
	}
	if err := rows.Err(); err != nil {
		return "", refusedValue(timeoutOr(ctx, s, err), cols)
	}
	fmt.Fprintf(&out, `],"count":%d,"truncated":%t}`, n, truncated)
	return out.String(), nil
}

// timeoutOr names a stopped query for what it is.
func timeoutOr(ctx context.Context, s *Source, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || strings.Contains(err.Error(), "statement timeout") ||
		strings.Contains(err.Error(), "interrupted") {
		return bad("the query ran past its %s time limit and was stopped; narrow it with where or a smaller limit", s.spec.timeout)
	}
	return err
}

// encodeArgRe finds the argument pgx could not send ("failed to encode
// args[2]: unable to encode true into binary format for int4 …").
var encodeArgRe = regexp.MustCompile(`^failed to encode args\[(\d+)\]: `)

// refusedValue names a where value Postgres could not take for its
// column (its types are checked where SQLite's affinity takes anything:
// a word for an integer, a time it cannot read, true for an integer) as
// the model's to fix, with the database's words, which name the value
// and the type, and the column when the driver could not send it. cols
// are the statement's arguments' columns. Any other error is err.
func refusedValue(err error, cols []string) error {
	var pe *pgconn.PgError
	msg := ""
	switch {
	case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "22"): // data exception
		msg = pe.Message
	case err != nil && encodeArgRe.MatchString(err.Error()):
		m := encodeArgRe.FindStringSubmatch(err.Error())
		msg = err.Error()[len(m[0]):]
		if i, _ := strconv.Atoi(m[1]); i < len(cols) {
			msg = "where." + cols[i] + ": " + msg
		}
	default:
		return err
	}
	return bad("the app's database refused a value of the query: %s; give each where value as the column's rows show it", clipTo(msg, 300))
}

// renderRow renders one row of t as a JSON object in column order; long
// text is cut and binary data summarised.
func renderRow(t *table, cols []string, vals []any) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, c := range cols {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(c)
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(cell(vals[i], t.types[c]))
		if err != nil {
			v = []byte(`null`)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// cell is a value as a result shows it; typ is its column's type as the
// database declares it.
func cell(v any, typ string) any {
	switch x := v.(type) {
	case []byte:
		if !utf8.Valid(x) {
			return fmt.Sprintf("[%d bytes]", len(x))
		}
		return cut(string(x))
	case string:
		// Postgres's driver reads a numeric as its text; a number is a
		// JSON number (exact, as the database has it) unless it is one
		// JSON cannot write (NaN, Infinity).
		if typ == "numeric" {
			if f, err := strconv.ParseFloat(x, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return json.Number(x)
			}
		}
		return cut(x)
	case time.Time:
		// Postgres: a date is a day and a timestamp without a zone has
		// none; shown in UTC they would name another day or hour. As
		// shown, each finds its row again.
		switch {
		case typ == "date":
			return x.Format(time.DateOnly)
		case strings.HasPrefix(typ, "timestamp without"):
			return x.Format("2006-01-02T15:04:05.999999999")
		}
		return x.UTC().Format(time.RFC3339Nano)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
	}
	return v
}

func cut(s string) string {
	if len(s) <= maxCell {
		return s
	}
	s = s[:maxCell]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
