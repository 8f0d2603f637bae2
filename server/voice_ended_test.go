package server_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestRealtimeRefusesEndedSession proves that POST /v1/realtime/session
// refuses an expired or completed session with the 409 a turn or a
// transcript on it gets, before any provider secret is minted.
func TestRealtimeRefusesEndedSession(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	ctx := context.Background()
	for _, status := range []coachd.SessionStatus{coachd.SessionExpired, coachd.SessionCompleted} {
		t.Run(string(status), func(t *testing.T) {
			sess, err := e.alice.c.CreateSession(ctx, "", "old")
			if err != nil {
				t.Fatal(err)
			}
			st := status
			if _, err := e.db.UpdateSession(ctx, e.alice.ID, sess.ID, coachd.SessionUpdate{Status: &st}); err != nil {
				t.Fatal(err)
			}
			// The text side refuses the session.
			if r := e.post(e.alice.key, "/v1/sessions/"+sess.ID+"/messages", `{"role":"user","content":"hi","source":"voice"}`, nil, nil); r.status != http.StatusConflict {
				t.Fatalf("transcript on a %s session = %d %s, want 409", status, r.status, r.body)
			}
			before := e.provider.Secrets()
			r := e.post(e.alice.key, "/v1/realtime/session", `{"session_id":"`+sess.ID+`"}`, nil, nil)
			if r.status != http.StatusConflict || e.provider.Secrets() != before {
				t.Fatalf("minting a voice secret for a %s session = %d (provider secrets minted: %d → %d) %s, want 409 and nothing minted",
					status, r.status, before, e.provider.Secrets(), r.body)
			}
		})
	}
}

// TestRealtimeFailedMintLeavesNoSession proves that a mint the provider
// refuses, without a session_id, leaves no empty "Voice conversation"
// session behind (a driver retrying a flaky connection would collect
// one per try); the retry that succeeds makes the one session.
func TestRealtimeFailedMintLeavesNoSession(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	ctx := context.Background()
	for _, status := range []int{http.StatusInternalServerError, http.StatusTooManyRequests} {
		e.provider.Fail(status, "down")
		if r := e.post(e.alice.key, "/v1/realtime/session", `{}`, nil, nil); r.status/100 == 2 {
			t.Fatalf("mint with the provider at %d = %d %s", status, r.status, r.body)
		}
	}
	if got, _, err := e.alice.c.ListSessions(ctx, coachd.Page{}); err != nil || len(got) != 0 {
		t.Fatalf("after two failed mints alice has %d sessions (%v), want none", len(got), err)
	}
	if r := e.post(e.alice.key, "/v1/realtime/session", `{}`, nil, nil); r.status != http.StatusOK {
		t.Fatalf("mint = %d %s", r.status, r.body)
	}
	if got, _, err := e.alice.c.ListSessions(ctx, coachd.Page{}); err != nil || len(got) != 1 {
		t.Fatalf("after a mint alice has %d sessions (%v), want one", len(got), err)
	}
}

// TestRealtimeRefusesPendingSession proves that a voice secret is not
// minted for a session that waits for an answer to an interactive tool:
// every transcript of that conversation would be refused (409) and lost,
// so the mint is refused first, with the same 409, before the operator
// pays for a secret.
func TestRealtimeRefusesPendingSession(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	ctx := context.Background()
	sess, err := e.alice.c.CreateSession(ctx, "", "options")
	if err != nil {
		t.Fatal(err)
	}
	p := &coachd.PendingInteraction{ToolUseID: "toolu_01", Name: "show_options", Input: []byte(`{"options":["Airport","Downtown"]}`)}
	if _, err := e.db.UpdateSession(ctx, e.alice.ID, sess.ID, coachd.SessionUpdate{SetPending: true, Pending: p}); err != nil {
		t.Fatal(err)
	}
	tr := e.post(e.alice.key, "/v1/sessions/"+sess.ID+"/messages", `{"role":"user","content":"hi","source":"voice"}`, nil, nil)
	if tr.status != http.StatusConflict {
		t.Fatalf("transcript on a pending session = %d %s, want 409", tr.status, tr.body)
	}
	before := e.provider.Secrets()
	r := e.post(e.alice.key, "/v1/realtime/session", `{"session_id":"`+sess.ID+`"}`, nil, nil)
	if r.status != http.StatusConflict || r.errorCode() != tr.errorCode() || e.provider.Secrets() != before {
		t.Fatalf("minting for a pending session = %d (secrets minted %d → %d) %s, want the transcript's 409 %s and nothing minted",
			r.status, before, e.provider.Secrets(), r.body, tr.body)
	}
}
