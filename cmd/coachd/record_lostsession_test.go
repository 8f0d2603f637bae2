package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestRecordDeletedSessionCharged: an app running its own loop records
// a turn whose session the user deleted while the turn ran. The messages
// have nowhere to go (404), but the tokens were spent: they are charged
// in the budget's unit and the hold released, not left to expire
// charging nothing, and coachd doctor balances.
func TestRecordDeletedSessionCharged(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	db := filepath.Join(t.TempDir(), "c.db")
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", db, "--demo", "--budget-unit", "usd")
	var pf struct {
		SessionID     string `json:"session_id"`
		ReservationID string `json:"reservation_id"`
	}
	if st := call(t, "POST", p.url+"/v1/chat/preflight", p.key, `{"message":"plan my week"}`, nil, &pf); st != 200 {
		t.Fatalf("preflight %d", st)
	}
	if st := call(t, "DELETE", p.url+"/v1/sessions/"+pf.SessionID, p.key, "", nil, nil); st != 204 {
		t.Fatalf("delete session %d", st)
	}
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":1000,
		"messages":[{"role":"assistant","content_blocks":[{"type":"text","text":"Here is your week."}]}]}`, pf.SessionID, pf.ReservationID)
	if st := call(t, "POST", p.url+"/v1/chat/record", p.key, body, nil, nil); st != 404 {
		t.Fatalf("record on a deleted session: %d, want 404", st)
	}
	var me meBudget
	call(t, "GET", p.url+"/v1/me", p.key, "", nil, &me)
	if b := me.Budget; b.TokensUsed != 3000 || b.TokensReserved != 0 { // 1,000 input tokens at $3/M
		t.Fatalf("/v1/me budget %+v: want 3000 µ$ charged and nothing held", b)
	}
	p.kill()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "doctor", "--db", db}, getenvFrom(nil), &out, &errb); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
}
