package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestBudgetUSDRefusedMessage: with --budget-unit usd a budget counts
// micro-dollars, but every door's 402 said "Token budget exhausted:
// 1500 tokens remain and this turn needs about 63138." for a budget with
// $0.0015 left: seed clients show that message as it is. It says
// dollars, on the stream, /v1/chat, preflight, the OpenAI door and the
// voice doors.
func TestBudgetUSDRefusedMessage(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	e.db.SetBudgetConfig(coachd.BudgetConfig{Unit: coachd.UnitMicroUSD})
	ctx := context.Background()
	budget := int64(1500) // $0.0015
	if _, err := e.admin.UpdateUser(ctx, e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	says := func(t *testing.T, door string, status int, body []byte, wantStatus int, want string) {
		t.Helper()
		if status != wantStatus || !strings.Contains(string(body), want) || strings.Contains(string(body), "tokens remain") {
			t.Errorf("%s = %d %s\nwant %d saying %q, in dollars", door, status, body, wantStatus, want)
		}
	}
	s := e.chat(ctx, e.alice.key, "", `{"message":"When should I drive?"}`)
	says(t, "/v1/chat/stream", s.status, s.raw, http.StatusPaymentRequired, "$0.0015 remains")
	for _, d := range []struct{ path, body string }{
		{"/v1/chat", `{"message":"When should I drive?"}`},
		{"/v1/chat/completions", `{"model":"rio","messages":[{"role":"user","content":"When should I drive?"}]}`},
	} {
		r := e.post(e.alice.key, d.path, d.body, nil, nil)
		says(t, d.path, r.status, r.body, http.StatusPaymentRequired, "$0.0015 remains")
	}
	r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"When should I drive?"}`, nil, nil)
	says(t, "/v1/chat/preflight", r.status, r.body, http.StatusOK, "$0.0015 remains")

	// Used up (an app's own loop holds the rest): the voice doors say
	// so, not in tokens.
	budget = 1_000_000
	if _, err := e.admin.UpdateUser(ctx, e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	var pf struct {
		Estimate int64 `json:"estimated_tokens"`
	}
	if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"When should I drive?"}`, nil, &pf); r.status != 200 || pf.Estimate <= 0 {
		t.Fatalf("preflight %d %s", r.status, r.body)
	}
	if _, err := e.admin.UpdateUser(ctx, e.alice.ID, coachd.UserUpdate{TokenBudget: &pf.Estimate}); err != nil {
		t.Fatal(err)
	}
	r = e.post(e.alice.key, "/v1/tts", `{"text":"Airport rush after five."}`, nil, nil)
	says(t, "/v1/tts", r.status, r.body, http.StatusPaymentRequired, "nothing remains of it for speech")
	r = e.post(e.alice.key, "/v1/realtime/session", `{}`, nil, nil)
	says(t, "/v1/realtime/session", r.status, r.body, http.StatusPaymentRequired, "nothing remains of it for a voice session")
}
