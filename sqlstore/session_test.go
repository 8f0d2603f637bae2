package sqlstore_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func testSessions(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		s := &coachd.Session{UserID: u.ID, Agent: "coach", Title: "first"}
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		if !coachd.ValidID(coachd.PrefixSession, s.ID) || s.Status != coachd.SessionActive {
			t.Fatalf("created = %+v", s)
		}
		got, err := db.FindSession(ctx, u.ID, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !sameJSON(t, got, s) {
			t.Fatalf("FindSession = %+v, want %+v", got, s)
		}

		clock.Add(time.Second)
		pending := &coachd.PendingInteraction{
			ToolUseID: "toolu_1", Name: "show_options", Input: json.RawMessage(`{"options":["a","b"]}`),
			Held:      []coachd.Block{coachd.ToolResultBlock("toolu_0", "ok", false)},
			ExpiresAt: clock.Now().Add(time.Hour),
		}
		upd, err := db.UpdateSession(ctx, u.ID, s.ID, coachd.SessionUpdate{
			Title: ptr("renamed"), Mode: ptr("arc"), Status: ptr(coachd.SessionCompleted),
			SetPending: true, Pending: pending,
		})
		if err != nil {
			t.Fatal(err)
		}
		got, _ = db.FindSession(ctx, u.ID, s.ID)
		if !sameJSON(t, got, upd) || got.Title != "renamed" || got.Mode != "arc" ||
			got.Status != coachd.SessionCompleted || !sameJSON(t, got.Pending, pending) ||
			!got.UpdatedAt.After(got.CreatedAt) {
			t.Fatalf("after update = %+v", got)
		}
		// Without SetPending the pending interaction stays; with it, nil clears.
		got, _ = db.UpdateSession(ctx, u.ID, s.ID, coachd.SessionUpdate{Title: ptr("x")})
		if got.Pending == nil {
			t.Fatal("pending cleared without SetPending")
		}
		got, _ = db.UpdateSession(ctx, u.ID, s.ID, coachd.SessionUpdate{SetPending: true})
		if got.Pending != nil {
			t.Fatal("pending not cleared")
		}
		if got, _ := db.FindSession(ctx, u.ID, s.ID); got.Pending != nil {
			t.Fatal("pending not cleared in the database")
		}
	})
	t.Run("Delete", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		keep := MustCreateSession(t, db, u.ID)
		for _, id := range []string{s.ID, keep.ID} {
			if err := db.AppendMessages(ctx, u.ID, id, []*coachd.Message{{Role: coachd.RoleUser, Content: "hi"}}); err != nil {
				t.Fatal(err)
			}
		}
		n := &coachd.Note{UserID: u.ID, SessionID: s.ID, Type: "tip", Title: "t", Content: "c"}
		if err := db.CreateNote(ctx, n); err != nil {
			t.Fatal(err)
		}
		if err := db.DeleteSession(ctx, u.ID, s.ID); err != nil {
			t.Fatal(err)
		}
		_, err := db.FindSession(ctx, u.ID, s.ID)
		wantCode(t, err, coachd.ENOTFOUND)
		wantCode(t, db.DeleteSession(ctx, u.ID, s.ID), coachd.ENOTFOUND)
		if got := rawCount(t, db, `SELECT COUNT(*) FROM messages WHERE session_id = ?`, s.ID); got != 0 {
			t.Fatalf("messages left after delete: %d", got)
		}
		if got := rawCount(t, db, `SELECT COUNT(*) FROM messages WHERE session_id = ?`, keep.ID); got != 1 {
			t.Fatalf("other session's messages = %d, want 1", got)
		}
		got, err := db.FindNote(ctx, u.ID, n.ID)
		if err != nil || got.SessionID != "" {
			t.Fatalf("note after session delete = %+v, %v; want kept, detached", got, err)
		}
	})
	t.Run("ErrUnknownUser", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		err := db.CreateSession(ctx, &coachd.Session{UserID: "usr_00000000000000000000000000"})
		wantCode(t, err, coachd.ENOTFOUND)
	})
	t.Run("ErrInvalidStatus", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		_, err := db.UpdateSession(ctx, u.ID, s.ID, coachd.SessionUpdate{Status: ptr(coachd.SessionStatus("bogus"))})
		wantCode(t, err, coachd.EINVALID)
		wantCode(t, db.CreateSession(ctx, &coachd.Session{UserID: u.ID, Status: "bogus"}), coachd.EINVALID)
	})
	t.Run("StatusCheckConstraint", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		s := MustCreateSession(t, db, u.ID)
		err := rawExec(t, db, `UPDATE sessions SET status = 'bogus' WHERE id = ?`, s.ID)
		if err == nil {
			t.Fatal("raw UPDATE to status 'bogus' succeeded; want a CHECK violation")
		}
		if !strings.Contains(strings.ToLower(err.Error()), "check") {
			t.Fatalf("raw UPDATE error = %v, want a CHECK violation", err)
		}
		if err := rawExec(t, db, `UPDATE sessions SET status = 'expired' WHERE id = ?`, s.ID); err != nil {
			t.Fatalf("raw UPDATE to a valid status: %v", err)
		}
	})
	t.Run("ListNewestFirst", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		other := MustCreateUser(t, db, "b")
		MustCreateSession(t, db, other.ID)
		var all []*coachd.Session
		for i := range 7 {
			if i%3 != 0 { // several sessions share a timestamp
				clock.Add(time.Second)
			}
			all = append(all, MustCreateSession(t, db, u.ID))
		}
		slices.SortFunc(all, func(a, b *coachd.Session) int {
			if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
				return c
			}
			return strings.Compare(b.ID, a.ID)
		})
		var got []*coachd.Session
		cursor := ""
		for range 10 {
			page, next, err := db.ListSessions(ctx, u.ID, coachd.Page{Cursor: cursor, Limit: 3})
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page...)
			if next == "" {
				break
			}
			cursor = next
		}
		if len(got) != len(all) {
			t.Fatalf("listed %d sessions, want %d", len(got), len(all))
		}
		for i := range all {
			if got[i].ID != all[i].ID {
				t.Fatalf("order [%d] = %s, want %s", i, got[i].ID, all[i].ID)
			}
		}
		full, next, err := db.ListSessions(ctx, u.ID, coachd.Page{})
		if err != nil || len(full) != 7 || next != "" {
			t.Fatalf("default page = %d sessions, next %q, %v", len(full), next, err)
		}
		for _, c := range []string{"garbage!", "bm90LWEtY3Vyc29y", encodeB64("12:usr_bad"), encodeB64("x:sess_00000000000000000000000000")} {
			_, _, err := db.ListSessions(ctx, u.ID, coachd.Page{Cursor: c})
			wantCode(t, err, coachd.EINVALID)
		}
	})
	t.Run("PageLimits", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		for range coachd.MaxPageLimit + 1 {
			MustCreateSession(t, db, u.ID)
		}
		got, next, err := db.ListSessions(ctx, u.ID, coachd.Page{})
		if err != nil || len(got) != coachd.DefaultPageLimit || next == "" {
			t.Fatalf("Limit 0: %d sessions, next %q, %v", len(got), next, err)
		}
		got, next, err = db.ListSessions(ctx, u.ID, coachd.Page{Limit: 10000})
		if err != nil || len(got) != coachd.MaxPageLimit || next == "" {
			t.Fatalf("Limit 10000: %d sessions, next %q, %v", len(got), next, err)
		}
		got, next, err = db.ListSessions(ctx, u.ID, coachd.Page{Cursor: next, Limit: 10000})
		if err != nil || len(got) != 1 || next != "" {
			t.Fatalf("last page: %d sessions, next %q, %v", len(got), next, err)
		}
	})
}

// sameJSON reports whether a and b encode to the same JSON value.
func sameJSON(tb testing.TB, a, b any) bool {
	tb.Helper()
	return jsonValue(tb, a) == jsonValue(tb, b)
}

// jsonValue encodes v, decodes it into a generic value and encodes that
// again: maps encode with sorted keys, so semantically equal JSON compares
// equal as strings.
func jsonValue(tb testing.TB, v any) string {
	tb.Helper()
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			tb.Fatalf("marshal %T: %v", v, err)
		}
	}
	var generic any
	if err := json.Unmarshal(raw, &generic); err != nil {
		tb.Fatalf("unmarshal %s: %v", raw, err)
	}
	out, _ := json.Marshal(generic)
	return string(out)
}

// TestCursorTimeOutOfRange: a cursor whose time no row can have (a client
// forging one, far before year 1 or after 9999) is EINVALID on both
// backends, as any malformed cursor, not a Postgres "timestamp out of
// range" answered as an internal error while SQLite answers an empty page.
func TestCursorTimeOutOfRange(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := MustCreateUser(t, db, "a")
			s := MustCreateSession(t, db, u.ID)
			n := &coachd.Note{UserID: u.ID, Type: "tip", Title: "t", Content: "c"}
			if err := db.CreateNote(ctx, n); err != nil {
				t.Fatal(err)
			}
			for _, micros := range []string{"-300000000000000000", "-9223372036854775808", "9223372036854775807"} {
				cur := func(fields ...string) coachd.Page {
					return coachd.Page{Cursor: base64.RawURLEncoding.EncodeToString([]byte(strings.Join(fields, ":")))}
				}
				_, _, err := db.ListSessions(ctx, u.ID, cur(micros, s.ID))
				wantCode(t, err, coachd.EINVALID)
				_, _, err = db.ListVoiceSessions(ctx, u.ID, cur(micros, "voice_"+s.ID[len(coachd.PrefixSession)+1:]))
				wantCode(t, err, coachd.EINVALID)
				_, _, err = db.ListNotes(ctx, u.ID, coachd.NoteFilter{}, cur("0", "50", micros, n.ID))
				wantCode(t, err, coachd.EINVALID)
			}
		})
	}
}
