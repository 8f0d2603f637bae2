package tools_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

type clockAt time.Time

func (c clockAt) Now() time.Time { return time.Time(c) }

// TestNextCheckinInUsersDay: complete_session's next_checkin_due was a
// UTC date from the wall clock, while the context that says a check-in is
// due reads the turn's clock in the user's zone. A user in Los Angeles
// checking in at 19:00 on Sunday March 1st was told the next one is due
// Monday the 9th; with no check-in yet, "today" was the machine's.
func TestNextCheckinInUsersDay(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC) // 19:00 on March 1st in Los Angeles
	la, err := time.LoadLocation("America/Los_Angeles")
	if err != nil {
		t.Skip("no time zone data")
	}
	newEnv := func() coachd.ToolEnv {
		db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "c.db"), clockAt(at))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		u := &coachd.User{Name: "ada"}
		if err := db.CreateUser(ctx, u, "h"); err != nil {
			t.Fatal(err)
		}
		s := &coachd.Session{UserID: u.ID, Agent: "default"}
		if err := db.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		return coachd.ToolEnv{User: u, Session: s, Store: db, Emit: func(coachd.Event) {},
			Now: func() time.Time { return at.In(la) }}
	}
	t.Run("NoCheckinYet", func(t *testing.T) {
		env := newEnv()
		r := exec(t, tools.CompleteSession{Policy: checkinPolicy{}}, env, `{"type":"session"}`)
		if r.IsError || !strings.Contains(r.Content, `"next_checkin_due":"2026-03-01"`) {
			t.Fatalf("complete: %+v, want next_checkin_due 2026-03-01", r)
		}
	})
	t.Run("AfterCheckin", func(t *testing.T) {
		env := newEnv()
		if r := exec(t, tools.SaveFile{}, env, `{"file_type":"check-in","file_name":"2026-03-01","content":"Good week"}`); r.IsError {
			t.Fatal(r.Content)
		}
		r := exec(t, tools.CompleteSession{Policy: checkinPolicy{}}, env, `{"type":"session"}`)
		if r.IsError || !strings.Contains(r.Content, `"next_checkin_due":"2026-03-08"`) {
			t.Fatalf("complete: %+v, want next_checkin_due 2026-03-08", r)
		}
	})
}
