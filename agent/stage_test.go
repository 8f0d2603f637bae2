package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// noteWrites counts how notes reach the store: a write of their own
// (CreateNote) or in a round's write (EndTurn's Notes).
type noteWrites struct {
	coachd.Store
	own, inRound atomic.Int32
}

func (w *noteWrites) CreateNote(ctx context.Context, n *coachd.Note) error {
	w.own.Add(1)
	return w.Store.CreateNote(ctx, n)
}

func (w *noteWrites) EndTurn(ctx context.Context, userID string, e coachd.TurnEnd) (*coachd.Reservation, *coachd.Session, error) {
	w.inRound.Add(int32(len(e.Notes)))
	return w.Store.EndTurn(ctx, userID, e)
}

// noteHarness is a harness whose runner writes through a noteWrites, and
// whose model calls save_note (twice when the message says "two") and
// then, once it has the results, answers with text.
func noteHarness(t *testing.T, then ...anthropictest.BlockSpec) (*harness, *noteWrites, *agent.Runner) {
	h := newHarness(t, agent.Limits{})
	w := &noteWrites{Store: h.store}
	r := h.newRunner(tools.Builtins(), func(string) (*agent.Agent, bool) { return h.agent, true }, func(c *agent.Config) { c.Store = w })
	h.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if len(req.ToolResults()) > 0 {
			return anthropictest.Text("noted", 5)
		}
		calls := []anthropictest.BlockSpec{use("n1", "save_note", `{"note_type":"tip","title":"one","content":"c"}`)}
		if strings.Contains(req.LastUserText(), "two") {
			calls = append(calls, use("n2", "save_note", `{"note_type":"tip","title":"two","content":"c"}`))
		}
		return anthropictest.Blocks(append(calls, then...)...)
	})
	return h, w, r
}

// results are the tool results the model got back, decoded.
func results(t *testing.T, h *harness) []map[string]any {
	t.Helper()
	reqs := h.fake.Requests()
	var out []map[string]any
	for _, b := range reqs[len(reqs)-1].ToolResults() {
		m := map[string]any{"is_error": b.IsError}
		if err := json.Unmarshal([]byte(b.ResultText()), &m); err != nil {
			m["text"] = b.ResultText()
		}
		out = append(out, m)
	}
	return out
}

// liveNotes is the user's stored count of live notes.
func liveNotes(t *testing.T, h *harness) int64 {
	t.Helper()
	u, err := h.store.FindUserByID(context.Background(), h.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	return u.LiveNotes
}

// A note save_note makes is stored with its round, in the round's write,
// under the ID the model was told, whichever way the round is stored:
// charged to the turn's reservation, appended for a free preview, or held
// for a pause.
func TestSaveNoteJoinsRound(t *testing.T) {
	for _, c := range []struct {
		name, stop string
		setup      func(*harness)
		then       []anthropictest.BlockSpec
	}{
		{name: "charged", stop: coachd.TurnEndTurn},
		{name: "free preview", stop: coachd.TurnEndTurn, setup: func(h *harness) {
			h.agent.FreePreviewTurns = 1
			zero := int64(0)
			if _, err := h.store.UpdateUser(context.Background(), h.user.ID, coachd.UserUpdate{TokenBudget: &zero}); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "pause", stop: coachd.TurnAwaitingInput,
			then: []anthropictest.BlockSpec{use("o1", "show_options", `{"prompt":"Which?","options":["A","B"]}`)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, w, r := noteHarness(t, c.then...)
			if c.setup != nil {
				c.setup(h)
			}
			tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: h.user, Message: "save two"})
			if err != nil {
				t.Fatal(err)
			}
			res := tr.Run(context.Background(), &sink{})
			if res.StopReason != c.stop {
				t.Fatalf("stop %s %v", res.StopReason, res.Err)
			}
			if own, in := w.own.Load(), w.inRound.Load(); own != 0 || in != 2 {
				t.Fatalf("notes written on their own %d, in a round's write %d; want 0 and 2", own, in)
			}
			var ids []string
			if c.stop == coachd.TurnEndTurn {
				for _, m := range results(t, h) {
					if m["success"] != true {
						t.Fatalf("tool results %v", results(t, h))
					}
					ids = append(ids, fmt.Sprint(m["note_id"]))
				}
			} else {
				notes, _, err := h.store.ListNotes(context.Background(), h.user.ID, coachd.NoteFilter{}, coachd.Page{Limit: 10})
				if err != nil {
					t.Fatal(err)
				}
				for _, n := range notes {
					ids = append(ids, n.ID)
				}
			}
			if len(ids) != 2 || liveNotes(t, h) != 2 {
				t.Fatalf("note ids %v, live notes %d", ids, liveNotes(t, h))
			}
			for _, id := range ids {
				n, err := h.store.FindNote(context.Background(), h.user.ID, id)
				if err != nil || n.SessionID != res.SessionID {
					t.Fatalf("note %s: %+v %v", id, n, err)
				}
			}
			if c.stop == coachd.TurnEndTurn {
				// user, the calls, their results, the reply
				if got := len(h.history(res.SessionID)); got != 4 {
					t.Fatalf("%d messages stored", got)
				}
			}
		})
	}
}

// At the cap save_note refuses, as it did writing on its own: the turn's
// staged notes count with the user's live ones.
func TestSaveNoteCapInRound(t *testing.T) {
	h, w, r := noteHarness(t)
	fill(t, h, coachd.MaxNotesPerUser-1)
	u, err := h.store.FindUserByID(context.Background(), h.user.ID) // as a request reads it
	if err != nil {
		t.Fatal(err)
	}
	res := endTurn(t, r, u, "", "save two")
	// The two calls run in parallel: one takes the last room.
	got := results(t, h)
	saved, refused := 0, 0
	for _, m := range got {
		switch {
		case m["success"] == true:
			saved++
		case m["is_error"] == true && strings.Contains(fmt.Sprint(m["text"]), "note limit reached (1000 notes): delete some first"):
			refused++
		}
	}
	if saved != 1 || refused != 1 {
		t.Fatalf("tool results %v", got)
	}
	if n := liveNotes(t, h); n != coachd.MaxNotesPerUser || w.own.Load() != 0 {
		t.Fatalf("live notes %d, written on their own %d", n, w.own.Load())
	}
	if len(h.history(res.SessionID)) != 4 {
		t.Fatal("the round was not stored")
	}
}

// A note another request took the last room for since this one read the
// user fails the round's write, so the turn: nothing of the round is
// stored, the note the model was told of included, and no text of the
// reply reached the client.
func TestSaveNoteCapTakenMeanwhile(t *testing.T) {
	h, _, r := noteHarness(t)
	fill(t, h, coachd.MaxNotesPerUser-1)
	u, err := h.store.FindUserByID(context.Background(), h.user.ID)
	if err != nil {
		t.Fatal(err)
	}
	fill(t, h, 1) // another request's
	tr, err := r.Prepare(context.Background(), agent.TurnRequest{User: u, Message: "save one"})
	if err != nil {
		t.Fatal(err)
	}
	s := &sink{}
	res := tr.Run(context.Background(), s)
	if res.Err == nil || res.Err.Code != coachd.ECONFLICT {
		t.Fatalf("stop %s err %v, want the cap's conflict", res.StopReason, res.Err)
	}
	if n := liveNotes(t, h); n != coachd.MaxNotesPerUser {
		t.Fatalf("live notes %d", n)
	}
	id, ok := results(t, h)[0]["note_id"].(string)
	if !ok {
		t.Fatalf("tool results %v, want the note saved", results(t, h))
	}
	if _, err := h.store.FindNote(context.Background(), h.user.ID, id); coachd.ErrorCode(err) != coachd.ENOTFOUND {
		t.Fatalf("the reported note: %v", err)
	}
	if got := len(h.history(res.SessionID)); got != 1 {
		t.Fatalf("%d messages stored, want the user's alone", got)
	}
	for _, ev := range s.events {
		if ev.Type == coachd.EventTextDelta {
			t.Fatalf("text reached the client: %+v", ev)
		}
	}
}

// fill creates n notes for the harness's user directly.
func fill(t *testing.T, h *harness, n int) {
	t.Helper()
	for i := range n {
		if err := h.store.CreateNote(context.Background(), &coachd.Note{UserID: h.user.ID, Type: "tip", Title: fmt.Sprint(i), Content: "c"}); err != nil {
			t.Fatal(err)
		}
	}
}
