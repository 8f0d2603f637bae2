package agent

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestCheckinDueByTheUsersDays: a check-in is due every_days after the
// last one, and complete_session tells the user that date. The context
// counted 24-hour periods instead: a user in Los Angeles who checked in
// at 19:00 on Sunday March 1st (told "next check-in due 2026-03-08") was
// "not due (last check-in 6 days ago)" all of Sunday the 8th until 19:00,
// and the weekly check-in skill stayed off.
func TestCheckinDueByTheUsersDays(t *testing.T) {
	ctx := context.Background()
	checkedIn := time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC) // Sunday March 1st, 19:00 in Los Angeles
	clock := &fixedClock{t: checkedIn}
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "c.db"), clock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &coachd.User{Name: "Ada"}
	if err := db.CreateUser(ctx, u, "h"); err != nil {
		t.Fatal(err)
	}
	for _, f := range []*coachd.File{
		{UserID: u.ID, Type: "profile", Name: "profile", Content: "Lives in LA.", Attributes: coachd.FileAttributes{Timezone: "America/Los_Angeles"}},
		{UserID: u.ID, Type: "check-in", Name: "2026-03-01", Content: "Good week."},
	} {
		if err := db.SaveFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	sess := &coachd.Session{UserID: u.ID, Agent: "sage", Title: "today"}
	if err := db.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	a, _ := sagePack(t).Agent("sage")
	for _, c := range []struct {
		now  time.Time
		due  bool
		text string
	}{
		{time.Date(2026, 3, 8, 16, 0, 0, 0, time.UTC), true, "due (last check-in 7 days ago)"},                   // Sunday the 8th, 09:00 there
		{time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC), false, "not due (last check-in 6 days ago, every 7 days)"}, // Saturday the 7th, 23:00 there
	} {
		d, err := gather(ctx, db, u, sess, c.now, a.Context)
		if err != nil {
			t.Fatal(err)
		}
		due, text := d.checkin(a.Context)
		if due != c.due || text != c.text {
			t.Errorf("at %s: due %v %q, want %v %q", d.now.Format(time.RFC3339), due, text, c.due, c.text)
		}
		if _, tail := systemPrompt(a, d); c.due && !strings.Contains(tail[0].Text+"", "Check-in: due") {
			t.Errorf("at %s the turn context does not say the check-in is due", d.now.Format(time.RFC3339))
		}
	}
}
