package server_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestRecordRepeated: seed 000 sends no Idempotency-Key, so a record its
// network made it send twice (the first answer lost) must not store the
// turn twice: the same body on the same reservation answers as the first
// did and stores nothing more, on record and on abort. A later record of
// the same turn with more (new messages, more tokens) is still taken.
func TestRecordRepeated(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	stored := func(sessionID string) int {
		t.Helper()
		msgs, err := e.db.History(t.Context(), e.alice.ID, sessionID)
		if err != nil {
			t.Fatal(err)
		}
		return len(msgs)
	}
	post := func(path, body string) string {
		t.Helper()
		r := e.post(e.alice.key, path, body, nil, nil)
		if r.status != 200 {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
		var v map[string]any
		json.Unmarshal(r.body, &v)
		return fmt.Sprint(v["state"], " ", v["tokens_charged"])
	}
	t.Run("Record", func(t *testing.T) {
		pf := seed000Preflight(t, e, "when is the rush?")
		body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":300,"messages":[
			{"role":"user","content_blocks":[{"type":"text","text":"when is the rush?"}]},
			{"role":"assistant","content_blocks":[{"type":"text","text":"After five."}]}]}`, pf.SessionID, pf.ReservationID)
		first := post("/v1/chat/record", body)
		if again := post("/v1/chat/record", body); again != first {
			t.Errorf("repeat answered %q, the first %q", again, first)
		}
		if n := stored(pf.SessionID); n != 2 {
			t.Errorf("stored %d messages, want 2", n)
		}
		e.mustLedger(e.alice.ID, 300, 0)
		// More of the same turn, after it was settled, is still stored.
		more := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":350,"messages":[
			{"role":"user","content_blocks":[{"type":"text","text":"and tomorrow?"}]}]}`, pf.SessionID, pf.ReservationID)
		post("/v1/chat/record", more)
		if n := stored(pf.SessionID); n != 3 {
			t.Errorf("stored %d messages after more, want 3", n)
		}
		e.mustLedger(e.alice.ID, 350, 0)
	})
	t.Run("Abort", func(t *testing.T) {
		pf := seed000Preflight(t, e, "and on Sunday?")
		body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":50,"partial_messages":[
			{"role":"user","content_blocks":[{"type":"text","text":"and on Sunday?"}]},
			{"role":"assistant","content_blocks":[{"type":"text","text":"On Sunday the"}]}]}`, pf.SessionID, pf.ReservationID)
		first := post("/v1/chat/abort", body)
		if again := post("/v1/chat/abort", body); again != first {
			t.Errorf("repeat answered %q, the first %q", again, first)
		}
		if n := stored(pf.SessionID); n != 2 {
			t.Errorf("stored %d messages, want 2", n)
		}
	})
}
