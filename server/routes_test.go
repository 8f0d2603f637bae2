package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// field walks a decoded JSON value along a dotted path ("a.b.0.c").
func field(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := 0
			for _, c := range k {
				i = i*10 + int(c-'0')
			}
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func TestRoutes(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		sess := e.MustSession(e.alice)
		e.MustSession(e.alice)
		note := e.MustNote(e.alice, "Airport")
		e.MustNote(e.alice, "Stadium")
		key := e.alice.key
		sp, np := "/v1/sessions/"+sess.ID, "/v1/notes/"+note.ID

		// want maps a dotted path of the JSON answer to its expected value
		// as fmt prints it; "*" only requires the field to be present.
		tests := []struct {
			name   string
			req    request
			status int
			want   map[string]string
		}{
			{"Healthz", request{method: "GET", path: "/healthz"}, 200, map[string]string{"status": "ok"}},
			{"CreateUser", request{method: "POST", path: "/v1/users", key: adminKey, body: `{"name":"carol","token_budget":5000}`}, 201,
				map[string]string{"name": "carol", "token_budget": "5000", "api_key": "*", "id": "*"}},
			{"GetUser", request{method: "GET", path: "/v1/users/" + e.alice.ID, key: adminKey}, 200, map[string]string{"name": "alice"}},
			{"PatchUserBudget", request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"token_budget":999}`}, 200,
				map[string]string{"token_budget": "999", "name": "alice"}},
			{"PatchUserName", request{method: "PATCH", path: "/v1/users/" + e.bob.ID, key: adminKey, body: `{"name":"robert"}`}, 200,
				map[string]string{"name": "robert"}},
			{"Me", request{method: "GET", path: "/v1/me", key: key}, 200, map[string]string{"id": e.alice.ID, "token_budget": "999"}},
			{"CreateSession", request{method: "POST", path: "/v1/sessions", key: key, body: `{"agent":"rideshare","title":"Saturday"}`}, 201,
				map[string]string{"agent": "rideshare", "title": "Saturday", "status": "active", "message_count": "0"}},
			{"CreateSessionNoBody", request{method: "POST", path: "/v1/sessions", key: key}, 201, map[string]string{"agent": "default", "status": "active"}},
			{"ListSessions", request{method: "GET", path: "/v1/sessions", key: key}, 200,
				map[string]string{"sessions.0.title": "", "sessions.3.id": sess.ID, "next_cursor": ""}},
			{"ListSessionsPage", request{method: "GET", path: "/v1/sessions?limit=1", key: key}, 200, map[string]string{"sessions.0.id": "*", "sessions.1": "<nil>"}},
			{"GetSession", request{method: "GET", path: sp, key: key}, 200, map[string]string{"id": sess.ID, "message_count": "3", "title": "Friday plan"}},
			{"ListMessages", request{method: "GET", path: sp + "/messages", key: key}, 200, map[string]string{
				"messages.0.seq": "1", "messages.0.role": "user", "messages.0.content_blocks.0.text": "When should I drive?",
				"messages.1.content_blocks.1.type": "tool_use", "messages.1.content_blocks.1.input.query": "friday",
				"messages.2.content_blocks.0.tool_use_id": "toolu_01", "messages.2.content_blocks.0.content": "no notes",
				"next_cursor": "",
			}},
			{"ListMessagesPage", request{method: "GET", path: sp + "/messages?limit=2", key: key}, 200,
				map[string]string{"messages.1.seq": "2", "messages.2": "<nil>", "next_cursor": "2"}},
			{"ListMessagesCursor", request{method: "GET", path: sp + "/messages?cursor=2", key: key}, 200,
				map[string]string{"messages.0.seq": "3", "messages.1": "<nil>"}},
			// The last page first, then the ones before it (the browser UI
			// opens a long conversation at its end).
			{"ListMessagesLast", request{method: "GET", path: sp + "/messages?before=end&limit=2", key: key}, 200,
				map[string]string{"messages.0.seq": "2", "messages.1.seq": "3", "messages.2": "<nil>", "prev_cursor": "2", "next_cursor": ""}},
			{"ListMessagesBefore", request{method: "GET", path: sp + "/messages?before=2&limit=2", key: key}, 200,
				map[string]string{"messages.0.seq": "1", "messages.1": "<nil>", "prev_cursor": "<nil>"}},
			{"CreateNote", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"preference","title":"Mornings","content":"Prefers early shifts"}`}, 201,
				map[string]string{"note_type": "preference", "importance": "50", "is_pinned": "false", "id": "*"}},
			{"CreateNoteFull", request{method: "POST", path: "/v1/notes", key: key, body: `{"note_type":"market_update","category":"earnings","title":"Surge","content":"x","importance":100,"market_slug":"new-york-2","is_pinned":true}`}, 201,
				map[string]string{"is_pinned": "true", "market_slug": "new-york-2", "importance": "100"}},
			{"ListNotes", request{method: "GET", path: "/v1/notes", key: key}, 200, map[string]string{"notes.0.title": "Surge", "notes.4": "<nil>"}},
			{"ListNotesFiltered", request{method: "GET", path: "/v1/notes?type=tip&category=timing&pinned=false&limit=1", key: key}, 200,
				map[string]string{"notes.0.note_type": "tip", "notes.1": "<nil>", "next_cursor": "*"}},
			{"GetNote", request{method: "GET", path: np, key: key}, 200, map[string]string{"title": "Airport", "market_slug": "dallas-tx"}},
			{"UpdateNote", request{method: "PUT", path: np, key: key, body: `{"title":"Airport runs","importance":90}`}, 200,
				map[string]string{"title": "Airport runs", "importance": "90", "content": "Airport rush after 5pm"}},
			{"PinNote", request{method: "POST", path: np + "/pin", key: key}, 200, map[string]string{"is_pinned": "true"}},
			{"UnpinNote", request{method: "POST", path: np + "/pin", key: key}, 200, map[string]string{"is_pinned": "false"}},
			{"DeleteNote", request{method: "DELETE", path: np, key: key}, 204, nil},
			{"ListNotesHidesDeleted", request{method: "GET", path: "/v1/notes?type=tip", key: key}, 200, map[string]string{"notes.0.title": "Stadium", "notes.1": "<nil>"}},
			{"ListNotesIncludeDeleted", request{method: "GET", path: "/v1/notes?type=tip&include_deleted=true", key: key}, 200, map[string]string{"notes.1.title": "*"}},
			{"NoteStats", request{method: "GET", path: "/v1/notes/stats", key: key}, 200,
				map[string]string{"total": "*", "deleted": "1", "pinned": "1", "by_type.tip": "*", "by_category.timing": "*"}},
			{"RestoreNote", request{method: "POST", path: np + "/restore", key: key}, 200, map[string]string{"title": "Airport runs", "deleted_at": "<nil>"}},
			{"DeleteSession", request{method: "DELETE", path: sp, key: key}, 204, nil},
			{"DeletedSessionIsGone", request{method: "GET", path: sp, key: key}, 404, map[string]string{"error.code": "not_found"}},
		}
		for _, tt := range tests {
			resp := e.do(tt.req)
			if resp.status != tt.status {
				t.Fatalf("%s: %s %s: status %d, want %d; body %s", tt.name, tt.req.method, tt.req.path, resp.status, tt.status, resp.body)
			}
			if tt.status == 204 {
				if len(resp.body) != 0 {
					t.Errorf("%s: body %q, want none", tt.name, resp.body)
				}
				continue
			}
			if ct := resp.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q", tt.name, ct)
			}
			var got any
			if err := json.Unmarshal(resp.body, &got); err != nil {
				t.Fatalf("%s: body %s: %v", tt.name, resp.body, err)
			}
			for path, want := range tt.want {
				v := field(got, path)
				if want == "*" {
					if v == nil || v == "" {
						t.Errorf("%s: %s missing in %s", tt.name, path, resp.body)
					}
					continue
				}
				if s := jsonString(v); s != want {
					t.Errorf("%s: %s = %s, want %s; body %s", tt.name, path, s, want, resp.body)
				}
			}
		}
	})
}

// jsonString prints a decoded JSON value the way the tables write it.
func jsonString(v any) string {
	switch x := v.(type) {
	case nil:
		return "<nil>"
	case string:
		return x
	case float64:
		b, _ := json.Marshal(x)
		return string(b)
	case bool:
		if x {
			return "true"
		}
		return "false"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
