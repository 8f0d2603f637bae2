package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// A database at version 12 keeps its ledger, reservations and limit
// windows through 0013_fold_pages (the ledger without AUTOINCREMENT,
// reservations and limit windows WITHOUT ROWID): the same rows and ids,
// a consistent ledger, a reservation that settles, windows that go on
// counting, and new ledger ids that follow the old ones.
func TestMigrateFoldPages(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := sqliteBefore(t, "0013_")
	now := time.Now()
	uid, rid := coachd.NewID(coachd.PrefixUser, now), coachd.NewID(coachd.PrefixReservation, now)
	exec(`INSERT INTO users (id, api_key_hash, token_budget, tokens_used, tokens_reserved, created_at, updated_at) VALUES (?, 'h', 1000, 40, 300, 0, 0)`, uid)
	exec(`INSERT INTO reservations (id, user_id, estimate, held, state, period_start, created_at, expires_at, updated_at)
		VALUES (?, ?, 300, 300, 'active', 0, 0, ?, 0)`, rid, uid, now.Add(time.Hour).UnixMicro())
	exec(`INSERT INTO ledger (user_id, used_delta, reserved_delta, reason, period_start, created_at, raw_tokens) VALUES (?, 40, 0, 'opening', 0, 0, 40)`, uid)
	window := now.Truncate(time.Minute)
	exec(`INSERT INTO limit_windows (user_id, limit_key, window_start, hits) VALUES (?, 'turns', ?, 2)`, uid, window.UnixMicro())
	exec(`INSERT INTO ledger (user_id, reservation_id, used_delta, reserved_delta, reason, period_start, created_at) VALUES (?, ?, 0, 300, 'reserve', 0, 0)`, uid, rid)
	raw.Close()

	db := MustOpen(t, path, coachd.SystemClock{})
	var ledgerSQL, resSQL, limitSQL string
	if err := db.SQL().QueryRowContext(ctx, `SELECT (SELECT sql FROM sqlite_master WHERE name = 'ledger'),
		(SELECT sql FROM sqlite_master WHERE name = 'reservations'), (SELECT sql FROM sqlite_master WHERE name = 'limit_windows')`).
		Scan(&ledgerSQL, &resSQL, &limitSQL); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(ledgerSQL, "AUTOINCREMENT") || !strings.Contains(resSQL, "WITHOUT ROWID") || !strings.Contains(limitSQL, "WITHOUT ROWID") {
		t.Fatalf("schema after 0013:\n%s\n%s\n%s", ledgerSQL, resSQL, limitSQL)
	}
	if n, ok, err := db.HitLimit(ctx, uid, coachd.LimitHit{Key: "turns", Window: window, Limit: 3}); err != nil || !ok || n != 3 {
		t.Fatalf("the window's third hit: %d %v (%v)", n, ok, err)
	}
	if _, ok, err := db.HitLimit(ctx, uid, coachd.LimitHit{Key: "turns", Window: window, Limit: 3}); err != nil || ok {
		t.Fatalf("a fourth hit of three allowed: %v (%v)", ok, err)
	}
	rows, err := db.Ledger(ctx, uid)
	if err != nil || len(rows) != 2 || rows[0].ID != 1 || rows[1].ID != 2 || rows[1].ReservationID != rid || rows[1].Reserved != 300 {
		t.Fatalf("ledger after 0013: %+v (%v)", rows, err)
	}
	if drift, err := db.CheckLedger(ctx); err != nil || len(drift) > 0 {
		t.Fatalf("drift %+v (%v)", drift, err)
	}
	r, err := db.Settle(ctx, uid, rid, coachd.Spend{Amount: 120, Tokens: 120}, coachd.SettleFinalize)
	if err != nil || r.State != coachd.ReservationFinalized || r.Charged != 120 || r.Remaining != 1000-160 {
		t.Fatalf("settled %+v (%v)", r, err)
	}
	if rows, err = db.Ledger(ctx, uid); err != nil || len(rows) != 3 || rows[2].ID != 3 || rows[2].Reason != "finalize" {
		t.Fatalf("ledger after a settlement: %+v (%v)", rows, err)
	}
	if n := rawCount(t, db, `SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'ledger'`); n != 0 {
		t.Fatalf("sqlite_sequence still counts the ledger (%d rows)", n)
	}
	if drift, err := db.CheckLedger(ctx); err != nil || len(drift) > 0 {
		t.Fatalf("drift %+v (%v)", drift, err)
	}
	// The rebuilt tables keep their indexes and their users' foreign key:
	// nothing dangles, and a deleted user's rows go with the user.
	for _, ix := range []string{"ledger_user", "reservations_live", "reservations_owner"} {
		if n := rawCount(t, db, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = ?`, ix); n != 1 {
			t.Errorf("index %s missing after 0013", ix)
		}
	}
	if n := rawCount(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Fatalf("%d rows break a foreign key after 0013", n)
	}
	if err := db.DeleteUser(ctx, uid); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"ledger", "reservations", "limit_windows"} {
		if n := rawCount(t, db, `SELECT COUNT(*) FROM `+table+` WHERE user_id = ?`, uid); n != 0 {
			t.Errorf("%s keeps %d rows of a deleted user", table, n)
		}
	}
}

// sqliteBefore returns a SQLite file migrated by hand up to the migration
// whose name starts with prefix (not applied), its raw handle and an exec
// that fails the test: a database as an older coachd left it, for
// migration tests to fill and then open with the store.
func sqliteBefore(t *testing.T, prefix string) (string, *sql.DB, func(string, ...any)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := raw.ExecContext(context.Background(), q, args...); err != nil {
			t.Fatalf("%.60s: %v", q, err)
		}
	}
	exec(`CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)`)
	files, err := filepath.Glob("migrations/sqlite/*.sql")
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range files {
		if strings.HasPrefix(filepath.Base(f), prefix) {
			return path, raw, exec
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		exec(string(b))
		exec(`INSERT INTO schema_migrations VALUES (?, ?, '')`, i+1, filepath.Base(f))
	}
	t.Fatalf("no migration %s*", prefix)
	return "", nil, nil
}

// A database at version 14 logged one event a row; through
// 0015_event_batches each such row is a batch of one, read back as it was
// written, and the turn's log goes on with batches after it.
func TestMigrateEventBatches(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := sqliteBefore(t, "0015_")
	uid, sid := coachd.NewID(coachd.PrefixUser, time.Now()), coachd.NewID(coachd.PrefixSession, time.Now())
	exec(`INSERT INTO users (id, api_key_hash, token_budget, created_at, updated_at) VALUES (?, 'h', 1000, 0, 0)`, uid)
	exec(`INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES (?, ?, 0, 0)`, sid, uid)
	exec(`INSERT INTO turns (session_id, turn, user_id, owner, started_at, alive_at) VALUES (?, 1, ?, 'p', 0, 0)`, sid, uid)
	for seq, data := range []string{
		`{"seq":1,"type":"turn_started","turn":1,"session_id":"` + sid + `"}`,
		`{"seq":2,"type":"text_delta","turn":1,"text":"old"}`,
	} {
		exec(`INSERT INTO turn_events (session_id, turn, seq, data) VALUES (?, 1, ?, ?)`, sid, seq+1, data)
	}
	raw.Close()

	db := MustOpen(t, path, coachd.SystemClock{})
	if _, err := db.AppendEvents(ctx, uid, sid, 1, []coachd.Event{
		{Turn: 1, Seq: 3, Type: coachd.EventTextDelta, Text: "new"},
		{Turn: 1, Seq: 4, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
	}, true); err != nil {
		t.Fatal(err)
	}
	got, err := db.Events(ctx, uid, sid, coachd.EventID{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"turn_started", "text_delta old", "text_delta new", "turn_ended"}
	var seen []string
	for i, ev := range got {
		if ev.Seq != int64(i+1) || ev.Turn != 1 {
			t.Errorf("event %d: seq %d turn %d", i, ev.Seq, ev.Turn)
		}
		seen = append(seen, strings.TrimSpace(string(ev.Type)+" "+ev.Text))
	}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Fatalf("events after 0015: %q, want %q", seen, want)
	}
}

// A database at version 15 keeps its event log through 0016_turns_by_key
// (turns WITHOUT ROWID, their events moved along): every turn and batch
// of a live session, read back in order, a stop asked for still asked,
// the log going on after it, and a deleted user's turns and events gone
// with the user. Rows an older file kept without foreign keys (a turn
// whose session is gone, events whose turn is) are left behind.
func TestMigrateTurnsByKey(t *testing.T) {
	ctx := context.Background()
	path, raw, exec := sqliteBefore(t, "0016_")
	now := time.Now()
	uid := coachd.NewID(coachd.PrefixUser, now)
	s1, s2 := coachd.NewID(coachd.PrefixSession, now), coachd.NewID(coachd.PrefixSession, now.Add(time.Millisecond))
	exec(`INSERT INTO users (id, api_key_hash, token_budget, created_at, updated_at) VALUES (?, 'h', 1000, 0, 0)`, uid)
	for _, sid := range []string{s1, s2} {
		exec(`INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES (?, ?, 0, 0)`, sid, uid)
	}
	exec(`INSERT INTO turns (session_id, turn, user_id, owner, started_at, alive_at, ended) VALUES (?, 1, ?, 'p', 10, 20, 1)`, s1, uid)
	exec(`INSERT INTO turns (session_id, turn, user_id, owner, started_at, alive_at, stop_requested) VALUES (?, 2, ?, 'p', 30, 40, 1)`, s1, uid)
	exec(`INSERT INTO turns (session_id, turn, user_id, owner, started_at, alive_at) VALUES (?, 1, ?, 'p', 50, 60)`, s2, uid)
	exec(`INSERT INTO turns (session_id, turn, user_id, owner, started_at, alive_at) VALUES ('sess_gone', 1, ?, 'p', 0, 0)`, uid)
	for _, e := range []struct {
		sid        string
		turn, last int64
		data       string
	}{
		{s1, 1, 2, `{"seq":1,"type":"turn_started","turn":1}` + "\n" + `{"seq":2,"type":"text_delta","turn":1,"text":"a"}`},
		{s1, 1, 3, `{"seq":3,"type":"turn_ended","turn":1,"stop_reason":"end_turn"}`},
		{s1, 2, 1, `{"seq":1,"type":"turn_started","turn":2}`},
		{s2, 1, 1, `{"seq":1,"type":"turn_started","turn":1}`},
		{s2, 9, 1, `{"seq":1,"type":"turn_started","turn":9}`}, // no such turn
	} {
		exec(`INSERT INTO turn_events (session_id, turn, last_seq, data) VALUES (?, ?, ?, ?)`, e.sid, e.turn, e.last, e.data)
	}
	raw.Close()

	db := MustOpen(t, path, coachd.SystemClock{})
	var turnsSQL string
	if err := db.SQL().QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'turns'`).Scan(&turnsSQL); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(turnsSQL, "WITHOUT ROWID") {
		t.Fatalf("turns after 0016:\n%s", turnsSQL)
	}
	if n := rawCount(t, db, `SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'turns_started'`); n != 1 {
		t.Fatal("index turns_started missing after 0016")
	}
	if n := rawCount(t, db, `SELECT COUNT(*) FROM pragma_foreign_key_check`); n != 0 {
		t.Fatalf("%d rows break a foreign key after 0016", n)
	}
	if n := rawCount(t, db, `SELECT COUNT(*) FROM turns WHERE session_id IN (?, ?) AND started_at + alive_at IN (30, 70, 110)`, s1, s2); n != 3 {
		t.Fatalf("%d of the 3 turns kept as they were", n)
	}
	if n := rawCount(t, db, `SELECT COUNT(*) FROM turns`) + rawCount(t, db, `SELECT COUNT(*) FROM turn_events`); n != 3+4 {
		t.Fatalf("%d turns and events after 0016, want 3 and 4", n)
	}

	stop, err := db.AppendEvents(ctx, uid, s1, 2, []coachd.Event{{Turn: 2, Seq: 2, Type: coachd.EventTextDelta, Text: "b"}}, false)
	if err != nil || !stop {
		t.Fatalf("the stop asked for before 0016: %v (%v)", stop, err)
	}
	got, err := db.Events(ctx, uid, s1, coachd.EventID{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, ev := range got {
		seen = append(seen, fmt.Sprintf("%d:%d %s%s", ev.Turn, ev.Seq, ev.Type, ev.Text))
	}
	if want := "1:1 turn_started,1:2 text_deltaa,1:3 turn_ended,2:1 turn_started,2:2 text_deltab"; strings.Join(seen, ",") != want {
		t.Fatalf("events after 0016: %s\nwant %s", strings.Join(seen, ","), want)
	}

	if err := db.DeleteUser(ctx, uid); err != nil {
		t.Fatal(err)
	}
	if n := rawCount(t, db, `SELECT COUNT(*) FROM turns WHERE user_id = ?`, uid) + rawCount(t, db, `SELECT COUNT(*) FROM turn_events`); n != 0 {
		t.Fatalf("%d turns and events of a deleted user", n)
	}
}
