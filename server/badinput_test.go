package server_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestBadInput sends malformed requests: each gets the documented status
// and error body, and nothing in the database changes.
func TestBadInput(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		sess := e.MustSession(e.alice)
		note := e.MustNote(e.alice, "Airport")
		key := e.alice.key
		np, sp := "/v1/notes/"+note.ID, "/v1/sessions/"+sess.ID
		noteBody := func(override string) string {
			return `{"note_type":"tip","title":"t","content":"c"` + override + `}`
		}
		long := func(n int) string { return strings.Repeat("é", n) } // runes, not bytes, are counted

		tests := []struct {
			name   string
			req    request
			status int
			code   string
			field  string // the first detail's field, when details are expected
		}{
			{"BadJSON", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":`}, 400, coachd.EINVALID, ""},
			{"UnquotedKeys", request{method: "POST", path: "/v1/notes", key: key, body: `{note_type: "tip"}`}, 400, coachd.EINVALID, ""},
			{"UnknownField", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"colour":"red"`)}, 400, coachd.EINVALID, "colour"},
			{"TrailingObject", request{method: "POST", path: "/v1/notes", key: key, body: noteBody("") + `{}`}, 400, coachd.EINVALID, ""},
			{"TrailingGarbage", request{method: "POST", path: "/v1/notes", key: key, body: noteBody("") + ` x`}, 400, coachd.EINVALID, ""},
			{"Oversize", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"market_slug":"` + strings.Repeat("a", 1<<20) + `"`)}, 413, coachd.ETOOLARGE, ""},
			{"ImportanceString", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"importance":"high"`)}, 400, coachd.EINVALID, "importance"},
			{"ImportanceFloat", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"importance":50.5`)}, 400, coachd.EINVALID, "importance"},
			{"TitleNumber", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"tip","title":5,"content":"c"}`}, 400, coachd.EINVALID, "title"},
			{"BodyArray", request{method: "POST", path: "/v1/notes", key: key, body: `[]`}, 400, coachd.EINVALID, ""},
			{"BodyNull", request{method: "POST", path: "/v1/notes", key: key, body: `null`}, 400, coachd.EINVALID, "note_type"},
			{"EmptyBody", request{method: "POST", path: "/v1/notes", key: key, header: map[string]string{"Content-Type": "application/json"}}, 400, coachd.EINVALID, ""},
			{"NoteTypeEnum", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"journal","title":"t","content":"c"}`}, 400, coachd.EINVALID, "note_type"},
			{"CategoryEnum", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"category":"weather"`)}, 400, coachd.EINVALID, "category"},
			{"SlugSpace", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"market_slug":"Dallas TX"`)}, 400, coachd.EINVALID, "market_slug"},
			{"SlugUnderscore", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"market_slug":"dallas_tx"`)}, 400, coachd.EINVALID, "market_slug"},
			{"SlugUpper", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"market_slug":"DALLAS-TX"`)}, 400, coachd.EINVALID, "market_slug"},
			{"Title201", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"tip","title":"` + long(201) + `","content":"c"}`}, 400, coachd.EINVALID, "title"},
			{"Content5001", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"tip","title":"t","content":"` + long(5001) + `"}`}, 400, coachd.EINVALID, "content"},
			{"Importance0", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"importance":0`)}, 400, coachd.EINVALID, "importance"},
			{"Importance101", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"importance":101`)}, 400, coachd.EINVALID, "importance"},
			{"MissingTitle", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"tip","content":"c"}`}, 400, coachd.EINVALID, "title"},
			{"TextPlain", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(""), header: map[string]string{"Content-Type": "text/plain"}}, 415, coachd.EUNSUPPORTED, ""},
			{"FormEncoded", request{method: "POST", path: "/v1/notes", key: key, body: "note_type=tip", header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}}, 415, coachd.EUNSUPPORTED, ""},
			{"UpdateNothing", request{method: "PUT", path: np, key: key, body: `{}`}, 400, coachd.EINVALID, ""},
			{"UpdateImportance", request{method: "PUT", path: np, key: key, body: `{"importance":101}`}, 400, coachd.EINVALID, "importance"},
			{"UpdateEmptyTitle", request{method: "PUT", path: np, key: key, body: `{"title":""}`}, 400, coachd.EINVALID, "title"},
			{"UpdateSlug", request{method: "PUT", path: np, key: key, body: `{"market_slug":"DALLAS-TX"}`}, 400, coachd.EINVALID, "market_slug"},
			{"UpdateUnknownField", request{method: "PUT", path: np, key: key, body: `{"user_id":"usr_x"}`}, 400, coachd.EINVALID, "user_id"},
			{"UpdateTextPlain", request{method: "PUT", path: np, key: key, body: `{"title":"x"}`, header: map[string]string{"Content-Type": "text/plain"}}, 415, coachd.EUNSUPPORTED, ""},
			{"TraversalEscaped", request{method: "GET", path: "/v1/notes/..%2f..%2fetc", key: key}, 404, coachd.ENOTFOUND, ""},
			{"TraversalPrefixed", request{method: "DELETE", path: "/v1/notes/note_..%2F..%2Fx", key: key}, 404, coachd.ENOTFOUND, ""},
			{"TraversalPin", request{method: "POST", path: "/v1/notes/note_..%2F..%2Fx/pin", key: key}, 404, coachd.ENOTFOUND, ""},
			{"SQLishSessionID", request{method: "DELETE", path: "/v1/sessions/sess_'%20OR%20'1'='1", key: key}, 404, coachd.ENOTFOUND, ""},
			{"TraversalMessages", request{method: "GET", path: "/v1/sessions/..%2F..%2Fetc%2Fpasswd/messages", key: key}, 404, coachd.ENOTFOUND, ""},
			{"UppercaseID", request{method: "GET", path: strings.ToUpper(np), key: key}, 404, coachd.ENOTFOUND, ""},
			{"MissingAuth", request{method: "GET", path: "/v1/me"}, 401, coachd.EUNAUTHORIZED, ""},
			{"WrongKey", request{method: "GET", path: "/v1/sessions", key: "ck_" + strings.Repeat("A", 43)}, 401, coachd.EUNAUTHORIZED, ""},
			{"NotAKey", request{method: "DELETE", path: np, key: "hunter2"}, 401, coachd.EUNAUTHORIZED, ""},
			{"BasicAuth", request{method: "GET", path: "/v1/me", header: map[string]string{"Authorization": "Basic YWxpY2U6cHc="}}, 401, coachd.EUNAUTHORIZED, ""},
			{"AdminWithUserKey", request{method: "POST", path: "/v1/users", key: key, body: `{"name":"mallory"}`}, 403, coachd.EFORBIDDEN, ""},
			{"AdminWrongKey", request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: "not-the-admin-key", body: `{"token_budget":1}`}, 401, coachd.EUNAUTHORIZED, ""},
			{"AdminNoAuth", request{method: "GET", path: "/v1/users/" + e.alice.ID}, 401, coachd.EUNAUTHORIZED, ""},
			{"AdminEmptyName", request{method: "POST", path: "/v1/users", key: adminKey, body: `{"name":""}`}, 400, coachd.EINVALID, "name"},
			{"AdminNegativeBudget", request{method: "POST", path: "/v1/users", key: adminKey, body: `{"name":"x","token_budget":-1}`}, 400, coachd.EINVALID, "token_budget"},
			{"AdminBudgetString", request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"token_budget":"lots"}`}, 400, coachd.EINVALID, "token_budget"},
			{"AdminPatchNothing", request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{}`}, 400, coachd.EINVALID, ""},
			{"AdminTraversalID", request{method: "GET", path: "/v1/users/usr_..%2F..%2Fx", key: adminKey}, 404, coachd.ENOTFOUND, ""},
			{"SessionAgentPath", request{method: "POST", path: "/v1/sessions", key: key, body: `{"agent":"../etc"}`}, 400, coachd.EINVALID, "agent"},
			{"SessionTitle201", request{method: "POST", path: "/v1/sessions", key: key, body: `{"title":"` + long(201) + `"}`}, 400, coachd.EINVALID, "title"},
			{"SessionUnknownField", request{method: "POST", path: "/v1/sessions", key: key, body: `{"status":"completed"}`}, 400, coachd.EINVALID, "status"},
			{"Limit0", request{method: "GET", path: "/v1/sessions?limit=0", key: key}, 400, coachd.EINVALID, "limit"},
			{"Limit201", request{method: "GET", path: "/v1/notes?limit=201", key: key}, 400, coachd.EINVALID, "limit"},
			{"LimitWord", request{method: "GET", path: sp + "/messages?limit=ten", key: key}, 400, coachd.EINVALID, "limit"},
			{"CursorJunk", request{method: "GET", path: "/v1/sessions?cursor=%27%3B--", key: key}, 400, coachd.EINVALID, "cursor"},
			{"CursorForged", request{method: "GET", path: "/v1/notes?cursor=bm90LWEtY3Vyc29y", key: key}, 400, coachd.EINVALID, ""},
			{"MessageCursorWord", request{method: "GET", path: sp + "/messages?cursor=abc", key: key}, 400, coachd.EINVALID, ""},
			{"MessageBeforeWord", request{method: "GET", path: sp + "/messages?before=abc", key: key}, 400, coachd.EINVALID, "before"},
			{"MessageBeforeZero", request{method: "GET", path: sp + "/messages?before=0", key: key}, 400, coachd.EINVALID, "before"},
			{"MessageBeforeAndCursor", request{method: "GET", path: sp + "/messages?before=end&cursor=1", key: key}, 400, coachd.EINVALID, "before"},
			{"TypeEnum", request{method: "GET", path: "/v1/notes?type=journal", key: key}, 400, coachd.EINVALID, "type"},
			{"PinnedYes", request{method: "GET", path: "/v1/notes?pinned=yes", key: key}, 400, coachd.EINVALID, "pinned"},
			{"IncludeDeleted1", request{method: "GET", path: "/v1/notes?include_deleted=1", key: key}, 400, coachd.EINVALID, "include_deleted"},
			{"UnknownRoute", request{method: "GET", path: "/v1/nope", key: key}, 404, coachd.ENOTFOUND, ""},
			{"WrongMethod", request{method: "PATCH", path: "/v1/me", key: key, body: `{}`}, 405, coachd.EINVALID, ""},
			// Issue 18's edge list: nesting, encodings, duplicates, ranges.
			{"DeepNesting", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"importance":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000))}, 400, coachd.EINVALID, ""},
			{"DeepNestingObject", request{method: "POST", path: "/v1/sessions", key: key, body: `{"title":` + strings.Repeat(`{"a":`, 50000) + `1` + strings.Repeat("}", 50000) + `}`}, 400, coachd.EINVALID, ""},
			{"InvalidUTF8", request{method: "POST", path: "/v1/notes", key: key, body: "{\"note_type\":\"tip\",\"title\":\"\xff\xfe\",\"content\":\"c\"}"}, 400, coachd.EINVALID, ""},
			{"NULInTitle", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"tip","title":"a\u0000b","content":"c"}`}, 400, coachd.EINVALID, "title"},
			{"RawNULByte", request{method: "POST", path: "/v1/notes", key: key, body: "{\"note_type\":\"tip\",\"title\":\"a\x00b\",\"content\":\"c\"}"}, 400, coachd.EINVALID, ""},
			{"DuplicateKey", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"tip","title":"a","title":"b","content":"c"}`}, 400, coachd.EINVALID, ""},
			{"ImportanceHuge", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"importance":1e400`)}, 400, coachd.EINVALID, ""},
			{"ImportanceOverflow", request{method: "POST", path: "/v1/notes", key: key, body: noteBody(`,"importance":99999999999999999999999`)}, 400, coachd.EINVALID, ""},
			{"AdminBudgetOverflow", request{method: "POST", path: "/v1/users", key: adminKey, body: `{"name":"x","token_budget":9223372036854775808}`}, 400, coachd.EINVALID, ""},
			{"SessionWrongType", request{method: "POST", path: "/v1/sessions", key: key, body: `{"title":"x"}`, header: map[string]string{"Content-Type": "application/xml"}}, 415, coachd.EUNSUPPORTED, ""},
		}
		before := mustJSON(t, e.dump())
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				resp := e.do(tt.req)
				if resp.status != tt.status || resp.errorCode() != tt.code {
					t.Fatalf("%s %.80s: %d %.300s; want %d %s", tt.req.method, tt.req.path, resp.status, resp.body, tt.status, tt.code)
				}
				if ct := resp.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q, want application/json", ct)
				}
				if tt.field != "" {
					var body struct {
						Error struct {
							Message string
							Details []coachd.FieldError
						}
					}
					mustUnmarshal(t, resp.body, &body)
					if len(body.Error.Details) == 0 || body.Error.Details[0].Field != tt.field || body.Error.Details[0].Code == "" {
						t.Errorf("details %+v, want field %q first", body.Error.Details, tt.field)
					}
				}
			})
		}
		if len(tests) < 30 {
			t.Errorf("only %d bad inputs", len(tests))
		}
		if after := mustJSON(t, e.dump()); after != before {
			t.Errorf("database changed:\nbefore %s\nafter  %s", before, after)
		}
	})
}
