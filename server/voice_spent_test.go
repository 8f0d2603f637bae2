package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// TestVoiceBudgetSpentMessage: a user whose budget is used up is told
// so in the words of what they asked for: speech is not "a voice
// session".
func TestVoiceBudgetSpentMessage(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	ctx := context.Background()
	e.fake.Enqueue(anthropictest.Text("Airport first.", 4))
	if s := e.chat(ctx, e.alice.key, "", `{"message":"When should I drive?"}`); s.status != 200 {
		t.Fatalf("turn = %d %s", s.status, s.raw)
	}
	st, err := e.db.BudgetStatus(ctx, e.alice.ID)
	if err != nil || st.TokensUsed == 0 {
		t.Fatalf("budget %+v %v", st, err)
	}
	// The budget is exactly what was used: nothing remains.
	if _, err := e.admin.UpdateUser(ctx, e.alice.ID, coachd.UserUpdate{TokenBudget: &st.TokensUsed}); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		"/v1/tts":              "no tokens remain for speech",
		"/v1/realtime/session": "no tokens remain for a voice session",
	} {
		r := e.post(e.alice.key, path, `{"text":"Airport rush after five."}`, nil, nil)
		if path == "/v1/realtime/session" {
			r = e.post(e.alice.key, path, `{}`, nil, nil)
		}
		if r.status != http.StatusPaymentRequired || r.errorCode() != coachd.EBUDGET || !strings.Contains(string(r.body), want) {
			t.Errorf("%s = %d %s, want %q", path, r.status, r.body, want)
		}
	}
}
