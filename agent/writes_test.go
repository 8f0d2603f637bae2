package agent_test

import (
	"context"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

// writesOf runs fn and returns what it cost the store's SQLite writer.
func writesOf(db *sqlstore.DB, fn func()) sqlstore.WriteStats {
	before := db.WriteStats()
	fn()
	after := db.WriteStats()
	return sqlstore.WriteStats{
		Statements:   after.Statements - before.Statements,
		Transactions: after.Transactions - before.Transactions,
		Commits:      after.Commits - before.Commits,
		WALPages:     after.WALPages - before.WALPages,
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
	got := map[string]sqlstore.WriteStats{
		"plain": writesOf(h.store, func() { run(sid, "and now?", plain) }),
		"tool":  writesOf(h.store, func() { run(sid, "save it", tool()...) }),
	}
	// What a turn costs today (at 08a9f2d: plain 19, 3, 3, 24; tool 36,
	// 6, 6, 39; a lone writer without a savepoint: plain 13, tool 22;
	// h-fold: the round's charge in the round's write, a round's messages
	// in one INSERT, 0013_fold_pages: plain 13, 3, 3, 20; tool 21, 5, 5,
	// 34; the user message in the admission: plain 13, 2, 2, 19; tool 21,
	// 4, 4, 33; the note in the round's write: tool 21, 3, 3, 32; the
	// lease and the user message's seqs in one UPDATE: plain 12, tool 20;
	// a settlement from the reservation the turn holds, without its read:
	// plain 11, tool 18); lower
	// these as writes are cut. Statements get room for a write
	// that meets another behind the model call (the later one then takes
	// a SAVEPOINT and RELEASE), WAL pages a little: where a b-tree page
	// splits depends on the ids of the rows.
	want := map[string]sqlstore.WriteStats{
		"plain": {Statements: 11 + 2, Transactions: 2, Commits: 2, WALPages: 21},
		"tool":  {Statements: 18 + 4, Transactions: 3, Commits: 3, WALPages: 35},
	}
	for kind, g := range got {
		w := want[kind]
		t.Logf("%s turn: %d statements, %d write transactions, %d commits, %d WAL pages",
			kind, g.Statements, g.Transactions, g.Commits, g.WALPages)
		if g.Statements > w.Statements || g.Transactions > w.Transactions || g.Commits > w.Commits || g.WALPages > w.WALPages {
			t.Errorf("%s turn: %+v, want at most %+v", kind, g, w)
		}
	}
}
