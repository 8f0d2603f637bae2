package datasource

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// action is a declared write on a table.
type action struct {
	spec *actionSpec
	t    *table
}

// input decodes a tool input into field → value, numbers kept exact.
func input(raw json.RawMessage) (map[string]any, error) {
	in := map[string]any{}
	if len(raw) == 0 {
		return in, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, bad("the input must be a JSON object")
	}
	return in, nil
}

// resolve turns a declared value into a statement argument.
func resolve(v value, in map[string]any, user string, now time.Time) (any, error) {
	switch v.special {
	case "now":
		return now.UTC().Format(time.RFC3339Nano), nil
	case "uuid":
		return newUUID(), nil
	case "user":
		return user, nil
	}
	if v.ref == "" {
		return v.literal, nil
	}
	return arg(in[v.ref])
}

// arg makes an input value a statement argument: objects and lists are
// stored as their JSON text.
func arg(x any) (any, error) {
	switch x := x.(type) {
	case nil, string, bool:
		return x, nil
	case json.Number:
		return number(x)
	}
	b, err := json.Marshal(x)
	return string(b), err
}

// given reports whether the input gives what v refers to: an input field
// left out leaves its column alone (an update keeps it, an insert lets
// the column's default apply), as a named query leaves its condition
// out; a field given as null writes NULL.
func given(v value, in map[string]any) bool {
	if v.ref == "" {
		return true
	}
	_, ok := in[v.ref]
	return ok
}

func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// run performs the action for user in one transaction: an insert of one
// row carrying the user's key, or an update of the one row of the user's
// that the input names.
func (a *action) run(ctx context.Context, raw json.RawMessage, user string, now time.Time) (string, error) {
	s := a.t.src
	in, err := input(raw)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, s.spec.timeout)
	defer cancel()
	tx, err := s.begin(ctx, s.rw, false)
	if err != nil {
		return "", a.stopped(ctx, err)
	}
	defer tx.Rollback()
	var args []any
	add := func(v any) string {
		args = append(args, v)
		return s.ph(len(args))
	}
	var stmt string
	result := map[string]any{"ok": true, "action": a.spec.name}
	if a.spec.kind == "insert" {
		cols, phs := []string{quote(a.t.scope)}, []string{add(user)}
		for _, as := range a.spec.values {
			if !given(as.value, in) {
				continue // the column's default applies
			}
			v, err := resolve(as.value, in, user, now)
			if err != nil {
				return "", err
			}
			cols = append(cols, quote(as.column))
			phs = append(phs, add(a.t.bindable(as.column, v)))
			if as.value.special == "uuid" {
				result[as.column] = v
			}
		}
		stmt = fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", quote(a.t.name), strings.Join(cols, ", "), strings.Join(phs, ", "))
	} else {
		key, row, err := a.find(ctx, tx, in, user)
		if err != nil {
			return "", err
		}
		result["row"] = row
		var sets, fields []string
		for _, as := range a.spec.values {
			if !given(as.value, in) {
				fields = append(fields, as.value.ref)
				continue // what the model did not mention stays as it is
			}
			v, err := resolve(as.value, in, user, now)
			if err != nil {
				return "", err
			}
			sets = append(sets, quote(as.column)+" = "+add(a.t.bindable(as.column, v)))
		}
		if len(sets) == 0 {
			return "", bad("%s: nothing to change; give one of: %s", a.spec.name, strings.Join(fields, ", "))
		}
		where, err := a.conds(in, user, now, add)
		if err != nil {
			return "", err
		}
		where = append(where, quote(a.spec.key)+" = "+add(key))
		stmt = fmt.Sprintf("UPDATE %s SET %s WHERE %s", quote(a.t.name), strings.Join(sets, ", "), strings.Join(where, " AND "))
	}
	res, err := tx.ExecContext(ctx, stmt, args...)
	if err != nil {
		if e := a.stopped(ctx, err); e != err {
			return "", e
		}
		return "", bad("the app's database refused %s: %s", a.spec.name, dbText(err))
	}
	n, _ := res.RowsAffected()
	if n == 0 && a.spec.kind == "update" {
		// The row found stopped matching before the write (another
		// transaction changed it meanwhile): nothing was written.
		return "", bad("%s: the row of %s changed meanwhile and nothing was written; look it up again", a.spec.name, a.t.name)
	}
	if n > 1 && a.spec.kind == "update" {
		// The declared key is not unique: the statement reached rows
		// the input did not name. The deferred rollback undoes it.
		return "", bad("%s: nothing was written: %s %v names %d rows of %s, not one (the data file's key must be unique)",
			a.spec.name, a.spec.key, clip(fmt.Sprint(result["row"].(map[string]any)[a.spec.key])), n, a.t.name)
	}
	if err := tx.Commit(); err != nil {
		if e := timeoutOr(ctx, s, err); e != err {
			// The database may have committed before the answer was lost.
			return "", bad("%s: the app's database did not confirm the write within %s; it may or may not be saved: look it up before trying again", a.spec.name, s.spec.timeout)
		}
		return "", err
	}
	result["rows_affected"] = n
	b, _ := json.Marshal(result)
	return string(b), nil
}

// stopped names an action stopped by the time cap (the database busy
// with the app's own writes, or slow) for what it is: a query's advice
// (narrow it with where) means nothing to it, and it wrote nothing.
func (a *action) stopped(ctx context.Context, err error) error {
	if e := timeoutOr(ctx, a.t.src, err); e != err {
		return bad("%s: the app's database did not take the write within %s (busy or slow); nothing was written: try again in a moment", a.spec.name, a.t.src.spec.timeout)
	}
	return err
}

// conds are an update's WHERE: the user's rows and the declared where.
func (a *action) conds(in map[string]any, user string, now time.Time, add func(any) string) ([]string, error) {
	where := []string{quote(a.t.scope) + " = " + add(user)}
	for c, v := range a.spec.where {
		x, err := resolve(v, in, user, now)
		if err != nil {
			return nil, err
		}
		if x == nil {
			where = append(where, quote(c)+" IS NULL")
		} else {
			where = append(where, quote(c)+" = "+add(a.t.bindable(c, x)))
		}
	}
	return where, nil
}

// find returns the key of the one row of the user's the input names: by
// the first match entry whose input field is given. An exact match (case
// aside) wins; otherwise a fuzzy entry matches by substring, and more than
// one candidate is an error that lists them (at most maxCandidates).
func (a *action) find(ctx context.Context, tx *sql.Tx, in map[string]any, user string) (any, map[string]any, error) {
	var names []string
	for _, m := range a.spec.match {
		names = append(names, m.input)
		v, ok := in[m.input]
		if !ok || v == nil || v == "" {
			continue
		}
		want, err := arg(v)
		if err != nil {
			return nil, nil, err
		}
		want = a.t.bindable(m.column, want)
		cands, keys, err := a.candidates(ctx, tx, in, m, want, user, false)
		if err != nil {
			return nil, nil, err
		}
		if len(cands) == 0 && m.fuzzy {
			if s, ok := want.(string); ok {
				cands, keys, err = a.candidates(ctx, tx, in, m, s, user, true)
				if err != nil {
					return nil, nil, err
				}
			}
		}
		switch {
		case len(cands) == 1:
			return keys[0], cands[0], nil
		case len(cands) == 0:
			return nil, nil, bad("%s: no row of %s matches %s %q", a.spec.name, a.t.name, m.input, clip(fmt.Sprint(v)))
		}
		list, _ := json.Marshal(cands)
		more := ""
		if len(cands) > maxCandidates {
			list, _ = json.Marshal(cands[:maxCandidates])
			more = " (and more)"
		}
		return nil, nil, bad("%s: %s %q matches several rows of %s%s; name one exactly or by its %s: %s",
			a.spec.name, m.input, clip(fmt.Sprint(v)), a.t.name, more, a.spec.key, list)
	}
	return nil, nil, bad("%s: name the row with one of: %s", a.spec.name, strings.Join(names, ", "))
}

// candidates reads the user's rows that match want on m.column: equal
// (case aside for text, fuzzy or not, as the README says), or containing
// it when fuzzy. At most
// maxCandidates+1 rows are read. Each row comes as shown to the model and
// with its key as the database has it, which the update is bound with:
// a key shown cut or summarised ("[16 bytes]") matches no row.
func (a *action) candidates(ctx context.Context, tx *sql.Tx, in map[string]any, m matchSpec, want any, user string, fuzzy bool) ([]map[string]any, []any, error) {
	s := a.t.src
	var args []any
	add := func(v any) string {
		args = append(args, v)
		return s.ph(len(args))
	}
	cols := []string{a.spec.key}
	if m.column != a.spec.key {
		cols = append(cols, m.column)
	}
	where, err := a.conds(in, user, time.Time{}, add)
	if err != nil {
		return nil, nil, err
	}
	col := quote(m.column)
	switch w, isText := want.(string); {
	case fuzzy:
		where = append(where, likeText(m.column, w, add))
	case isText:
		// Equal, case aside; equal as written too, since SQLite's lower()
		// folds ASCII only and Go's every letter ("ÉTÉ").
		where = append(where, "("+col+" = "+add(w)+" OR "+lowered(m.column)+" = "+add(strings.ToLower(w))+")")
	default:
		where = append(where, col+" = "+add(want))
	}
	sel := make([]string, len(cols))
	for i, c := range cols {
		sel[i] = s.selected(c)
	}
	q := fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY %s LIMIT %d", strings.Join(sel, ", "), quote(a.t.name),
		strings.Join(where, " AND "), quote(a.spec.key), maxCandidates+1)
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, a.stopped(ctx, err)
	}
	defer rows.Close()
	var out []map[string]any
	var keys []any
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		keys = append(keys, vals[0])
		row := map[string]any{}
		for i, c := range cols {
			row[c] = cell(vals[i], a.t.types[c])
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, a.stopped(ctx, err)
	}
	return out, keys, nil
}
