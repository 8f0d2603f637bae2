package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

// TestIsolation walks every /v1 route with bob's key against alice's
// session, messages and notes: each must answer exactly what a missing
// resource answers, and alice's data must not change.
func TestIsolation(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := MustEnv(t, dsn)
		sess := e.MustSession(e.alice)
		note := e.MustNote(e.alice, "Airport")
		deleted := e.MustNote(e.alice, "Old")
		if err := e.alice.c.DeleteNote(context.Background(), deleted.ID); err != nil {
			t.Fatal(err)
		}
		before := e.dump()
		missingSess := coachd.NewID(coachd.PrefixSession, sess.CreatedAt)
		missingNote := coachd.NewID(coachd.PrefixNote, note.CreatedAt)

		// Each route with alice's ID (in bob's hands) and with an ID that
		// exists nowhere.
		type route struct{ method, path, body string }
		routes := func(sessID, noteID, deletedID string) []route {
			return []route{
				{"GET", "/v1/sessions/" + sessID, ""},
				{"GET", "/v1/sessions/" + sessID + "/messages", ""},
				{"GET", "/v1/sessions/" + sessID + "/messages?limit=1&cursor=1", ""},
				{"GET", "/v1/sessions/" + sessID + "/messages?before=end", ""},
				{"GET", "/v1/sessions/" + sessID + "/messages?limit=1&before=2", ""},
				{"DELETE", "/v1/sessions/" + sessID, ""},
				{"GET", "/v1/notes/" + noteID, ""},
				{"PUT", "/v1/notes/" + noteID, `{"title":"mine now"}`},
				{"DELETE", "/v1/notes/" + noteID, ""},
				{"POST", "/v1/notes/" + noteID + "/pin", ""},
				{"POST", "/v1/notes/" + noteID + "/restore", ""},
				{"POST", "/v1/notes/" + deletedID + "/restore", ""},
				{"GET", "/v1/notes/" + deletedID, ""},
			}
		}
		theirs, missing := routes(sess.ID, note.ID, deleted.ID), routes(missingSess, missingNote, missingNote)
		for i, r := range theirs {
			got := e.do(request{method: r.method, path: r.path, key: e.bob.key, body: r.body})
			want := e.do(request{method: r.method, path: missing[i].path, key: e.bob.key, body: r.body})
			if got.status != 404 || got.errorCode() != coachd.ENOTFOUND {
				t.Errorf("%s %s as bob: %d %s, want 404 not_found", r.method, r.path, got.status, got.body)
			}
			if got.status != want.status || !bytes.Equal(got.body, want.body) {
				t.Errorf("%s %s as bob: %d %s; a missing one answers %d %s", r.method, r.path, got.status, got.body, want.status, want.body)
			}
		}

		// Listings and counts show bob nothing of alice's.
		ctx := context.Background()
		if list, _, err := e.bob.c.ListSessions(ctx, coachd.Page{}); err != nil || len(list) != 0 {
			t.Errorf("bob's sessions = %v, %v; want none", list, err)
		}
		if list, _, err := e.bob.c.ListNotes(ctx, coachd.NoteFilter{IncludeDeleted: true}, coachd.Page{}); err != nil || len(list) != 0 {
			t.Errorf("bob's notes = %v, %v; want none", list, err)
		}
		if st, err := e.bob.c.NoteStats(ctx); err != nil || st.Total != 0 || st.Deleted != 0 {
			t.Errorf("bob's stats = %+v, %v; want zero", st, err)
		}
		if me, err := e.bob.c.Me(ctx); err != nil || me.ID != e.bob.ID {
			t.Errorf("bob's me = %+v, %v", me, err)
		}
		// Bob's key is no admin key.
		for _, r := range []route{
			{"POST", "/v1/users", `{"name":"mallory"}`},
			{"GET", "/v1/users/" + e.alice.ID, ""},
			{"PATCH", "/v1/users/" + e.alice.ID, `{"token_budget":1}`},
		} {
			if got := e.do(request{method: r.method, path: r.path, key: e.bob.key, body: r.body}); got.status != 403 || got.errorCode() != coachd.EFORBIDDEN {
				t.Errorf("%s %s as bob: %d %s, want 403", r.method, r.path, got.status, got.body)
			}
		}

		after := e.dump()
		if a, b := mustJSON(t, before), mustJSON(t, after); a != b {
			t.Errorf("database changed:\nbefore %s\nafter  %s", a, b)
		}
		// And alice still sees all of it.
		if msgs, _, err := e.alice.c.Messages(ctx, sess.ID, coachd.Page{}); err != nil || len(msgs) != 3 {
			t.Errorf("alice's messages = %d, %v; want 3", len(msgs), err)
		}
		if n, err := e.alice.c.Note(ctx, note.ID); err != nil || n.Title != "Airport" {
			t.Errorf("alice's note = %+v, %v", n, err)
		}
	})
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
