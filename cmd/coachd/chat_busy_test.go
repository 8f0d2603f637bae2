package main

import (
	"context"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestChatREPLGoesOnWhileTurnRuns: a message typed at coachd chat's
// prompt while the session's turn still runs (started from another
// client, or one chat gave up following) is refused, 409
// turn_in_progress. The prompt ended there: chat exited with the error,
// and the conversation with it. It now says why and prompts again; the
// same message, sent again once the turn is over, gets its reply.
func TestChatREPLGoesOnWhileTurnRuns(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.Enqueue(anthropictest.Text("Leave at five.", 4), anthropictest.Text("Anything else?", 4))
	gate, held, release := holdModelCall(t, fake, 1)
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": gate, "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]

	// Another client's turn on the session, held at the model.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "POST", p.url+"/v1/chat/stream", strings.NewReader(`{"message":"plan my day"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sid := resp.Header.Get("X-Coachd-Session-Id")
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("the other client's turn: status %d, session %q", resp.StatusCode, sid)
	}
	<-held

	chatEnv := getenvFrom(map[string]string{"COACHD_URL": p.url, "COACHD_KEY": key})
	c := startREPL(ctx, []string{"--session", sid}, chatEnv)
	c.prompts(t, 1)
	c.say(t, "anything else?", 2)
	// The other client's turn ends.
	release()
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), `"stop_reason":"end_turn"`) {
		t.Fatalf("the other client's turn: %s", b)
	}
	c.say(t, "anything else?", 3)
	c.end(t)
	if !strings.Contains(c.err.String(), "turn_in_progress") || !strings.Contains(c.out.String(), "Anything else?") {
		t.Errorf("the refusal not said, or no reply after it:\nstdout %q\nstderr %q", c.out, c.err)
	}
}
