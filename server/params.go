package server

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
)

// pathID returns the {id} path value when it has the shape of an ID with
// the given prefix, or the uniform not-found error: an ID that could never
// exist is as missing as one that does not, and it never reaches SQL.
func pathID(r *http.Request, prefix, kind string) (string, error) {
	id := r.PathValue("id")
	if !coachd.ValidID(prefix, id) {
		return "", notFound(kind)
	}
	return id, nil
}

// query collects problems with query parameters so that one 400 lists them
// all.
type query struct {
	v    url.Values
	errs []coachd.FieldError
}

func newQuery(r *http.Request) *query { return &query{v: r.URL.Query()} }

func (q *query) fail(field, msg, code string) {
	q.errs = append(q.errs, coachd.FieldError{Field: field, Message: msg, Code: code})
}

// page reads ?cursor= and ?limit= (1..200, default 50).
func (q *query) page() coachd.Page {
	p := coachd.Page{Limit: coachd.DefaultPageLimit, Cursor: q.v.Get("cursor")}
	if raw := q.v.Get("limit"); raw != "" || q.v.Has("limit") {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 || n > coachd.MaxPageLimit {
			q.fail("limit", "must be an integer from 1 to 200", "range")
		} else {
			p.Limit = n
		}
	}
	if !plainCursor(p.Cursor) {
		q.fail("cursor", "is not a cursor this server returned", "format")
	}
	return p
}

// before reads the messages listing's ?before=: "end" (the last page) or
// the prev_cursor of a page, a message's seq; not with ?cursor=.
func (q *query) before(p *coachd.Page) {
	if !q.v.Has("before") {
		return
	}
	v := q.v.Get("before")
	n, err := strconv.ParseInt(v, 10, 64)
	switch {
	case p.Cursor != "":
		q.fail("before", "cannot be used with cursor", "conflict")
	case v == coachd.BeforeEnd || err == nil && n >= 1 && strconv.FormatInt(n, 10) == v:
		p.Before = v
	default:
		q.fail("before", "must be end or a prev_cursor this server returned", "format")
	}
}

// plainCursor rejects cursors no store would hand out: they are short runs
// of URL-safe characters. The store checks the rest.
func plainCursor(c string) bool {
	if len(c) > 512 {
		return false
	}
	for _, ch := range c {
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_' || ch == '.' || ch == '=' || ch == '~') {
			return false
		}
	}
	return true
}

// enum reads an optional parameter that must be one of set.
func (q *query) enum(name string, set []string) string {
	v := q.v.Get(name)
	if v == "" && !q.v.Has(name) {
		return ""
	}
	for _, ok := range set {
		if v == ok {
			return v
		}
	}
	q.fail(name, "must be one of "+strings.Join(set, ", "), "enum")
	return ""
}

// boolean reads an optional true|false parameter.
func (q *query) boolean(name string) *bool {
	if !q.v.Has(name) {
		return nil
	}
	switch q.v.Get(name) {
	case "true":
		t := true
		return &t
	case "false":
		f := false
		return &f
	}
	q.fail(name, "must be true or false", "enum")
	return nil
}

func (q *query) err() error {
	if len(q.errs) == 0 {
		return nil
	}
	return coachd.Invalid(q.errs...)
}

// servePage answers a list request: the page its query asks for, from
// list, as answer makes it (an empty list is [], never null).
func servePage[T any](s *Server, w http.ResponseWriter, r *http.Request, list func(coachd.Page) ([]T, string, error), answer func(items []T, next string) any) {
	q := newQuery(r)
	page := q.page()
	if err := q.err(); err != nil {
		s.Error(w, r, err)
		return
	}
	items, next, err := list(page)
	if err != nil {
		s.Error(w, r, err)
		return
	}
	if items == nil {
		items = []T{}
	}
	s.encode(w, r, http.StatusOK, answer(items, next))
}
