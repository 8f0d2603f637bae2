package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coachd/coachd/agent"
)

// TestSeed000AbortFreePreview: seed 000's route aborts a turn whose model
// stream threw, mid-reply or before it, with "{ session_id,
// reservation_id, partial_messages }" and never a tokens_used (lines
// 668-676): coachd cannot tell a reply cut off from one never begun. An
// abort that does not say what it spent, or that stores what the model
// said, uses up the free preview turn; only one reporting that nothing
// was spent (tokens_used 0, no reply) gives it back. Else a user who
// disconnects mid-stream on every turn has free turns without end.
func TestSeed000AbortFreePreview(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.FreePreviewTurns = 1
	e := MustChatEnv(t, ag)
	zero := int64(0)
	const userMsg = `{"role":"user","content_blocks":[{"type":"text","text":"how do I rank up?"}],"content_text":"how do I rank up?"}`
	cases := []struct {
		name, extra string
		givenBack   bool
	}{
		{"NothingSpent", `"tokens_used":0,"partial_messages":[` + userMsg + `]`, true},
		{"Seed000", `"partial_messages":[` + userMsg + `]`, false},
		{"Seed000NoMessages", ``, false},
		{"ReplyCutOff", `"tokens_used":0,"partial_messages":[` + userMsg + `,{"role":"assistant","content_blocks":[{"type":"text","text":"Work on your"}]}]`, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, key, err := e.admin.CreateUser(context.Background(), fmt.Sprintf("player%d", i), &zero)
			if err != nil {
				t.Fatal(err)
			}
			var pf preflightBody
			if r := e.post(key, "/v1/chat/preflight", `{"message":"how do I rank up?"}`, nil, &pf); r.status != 200 || !pf.IsFreePreview {
				t.Fatalf("preflight %d %s", r.status, r.body)
			}
			sep := ""
			if c.extra != "" {
				sep = ","
			}
			body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q%s%s}`, pf.SessionID, pf.ReservationID, sep, c.extra)
			if r := e.post(key, "/v1/chat/abort", body, nil, nil); r.status != 200 {
				t.Fatalf("abort %d %s", r.status, r.body)
			}
			r := e.post(key, "/v1/chat/preflight", `{"message":"and again?"}`, nil, nil)
			if c.givenBack && (r.status != 200 || budgetRefused(r)) {
				t.Fatalf("next preflight %d: the free turn that spent nothing was not given back", r.status)
			}
			if !c.givenBack && !budgetRefused(r) {
				t.Fatalf("next preflight %d %s, want refused: the aborted free turn was given back", r.status, r.body)
			}
		})
	}
	if drift, err := e.db.CheckLedger(context.Background()); err != nil || len(drift) > 0 {
		t.Fatalf("ledger drift %+v %v", drift, err)
	}
}
