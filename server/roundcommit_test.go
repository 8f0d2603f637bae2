package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// armTool arms its commitCutter when it runs: the next COMMIT is then
// its round's write (the assistant message, the tool results and the
// round's charge), which runs behind the next model call. The turn's
// earlier writes are committed by then: a tool runs after them.
type armTool struct{ p *commitCutter }

func (armTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "arm", Description: "arm", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (a *armTool) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	a.p.armed.Store(true)
	return coachd.ToolResult{Content: "armed"}, nil
}

// TestRoundCommitLostPG: a tool round's write (behind the next model
// call) whose COMMIT the server made but whose answer was lost on the
// way back. The turn took it for failed and ended with an internal error
// before its reply's text: the next call, charged, was never shown and
// never stored (only a retry got it, paying again). The turn now finds
// the round stored by its ids and goes on: the reply reaches the user
// and is stored, the round is stored once (no second copy of its
// assistant message or results, no "interrupted" result beside the real
// one), and the turn's end leaves nothing held, no lease, the ledger
// equal to the cache, and a history the next turn runs on.
func TestRoundCommitLostPG(t *testing.T) {
	dsn, p := behindCutter(t)
	arm := &armTool{p: p}
	e := mustChatEnvDepsOn(t, dsn, func(*server.Deps) {}, nil, arm)
	ctx := context.Background()

	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Hello.", 3) })
	first := e.chat(ctx, e.alice.key, "", `{"message":"hi"}`)
	if outcome(first) != "ok" {
		t.Fatalf("first turn: %s\n%s", outcome(first), first.raw)
	}
	sid := first.data(t, "message_start")["session_id"].(string)

	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if len(req.ToolResults()) == 0 {
			return anthropictest.Blocks(anthropictest.TextBlock("Checking. ", 4), anthropictest.ToolUse("toolu_arm", "arm", `{}`))
		}
		return anthropictest.Text("Drive after five.", 6)
	})
	s := e.chat(ctx, e.alice.key, "", `{"message":"and now?","session_id":"`+sid+`"}`)
	select {
	case <-p.cut:
	default:
		t.Fatalf("no COMMIT was cut: %s\n%s", outcome(s), s.raw)
	}
	// The turn goes on: the round is stored, so its reply is the user's.
	if o := outcome(s); o != "ok" {
		t.Fatalf("the turn whose round's COMMIT was lost: %s\n%s", o, s.raw)
	}
	var text string
	for _, ev := range s.named("content_delta") {
		var d struct{ Text string }
		if err := json.Unmarshal(ev.Data, &d); err != nil {
			t.Fatal(err)
		}
		text += d.Text
	}
	if want := "Checking. Drive after five."; text != want {
		t.Errorf("the turn sent %q, want %q", text, want)
	}

	count := func(q string) (n int) {
		t.Helper()
		if err := e.db.SQL().QueryRowContext(ctx, q, sid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(`SELECT count(*) FROM messages WHERE session_id = $1 AND role = 'assistant' AND content_json LIKE '%toolu_arm%'`); n != 1 {
		t.Errorf("the round's assistant message stored %d times, want once", n)
	}
	if n := count(`SELECT count(*) FROM messages WHERE session_id = $1 AND role = 'user' AND content_json LIKE '%toolu_arm%'`); n != 1 {
		t.Errorf("the round's results stored %d times, want once", n)
	}
	if n := count(`SELECT count(*) FROM messages WHERE session_id = $1 AND content = 'and now?'`); n != 1 {
		t.Errorf("the turn's message stored %d times, want once", n)
	}
	if n := count(`SELECT count(*) FROM messages WHERE session_id = $1 AND role = 'assistant' AND content = 'Drive after five.'`); n != 1 {
		t.Errorf("the turn's reply stored %d times, want once", n)
	}
	e.mustNothingHeld(t)
	// The turn's reservation is settled once, with all it spent: the
	// round's charge (committed) and the rest at its end.
	used := int64(s.data(t, "usage")["tokens_used"].(float64))
	var charged int64
	var state string
	if err := e.db.SQL().QueryRowContext(ctx, `SELECT r.state, r.charged FROM reservations r
		WHERE r.session_id = $1 ORDER BY r.id DESC LIMIT 1`, sid).Scan(&state, &charged); err != nil {
		t.Fatal(err)
	}
	if state == "active" || charged != used {
		t.Errorf("the turn's reservation is %s with %d charged, want settled with %d", state, charged, used)
	}

	// The next turn runs on the history the lost COMMIT left.
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Yes.", 2) })
	if next := e.chat(ctx, e.alice.key, "", `{"message":"sure?","session_id":"`+sid+`"}`); outcome(next) != "ok" {
		t.Fatalf("the next turn: %s\n%s", outcome(next), next.raw)
	}
	e.mustNothingHeld(t)
}
