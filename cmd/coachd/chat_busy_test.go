package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
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
	held, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" && calls.Add(1) == 1 {
			close(held)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		fake.Handler().ServeHTTP(w, r)
	}))
	defer gate.Close()
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": gate.URL, "COACHD_ADDR": "127.0.0.1:0"}
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
	in, typed := io.Pipe()
	out, errOut := &syncBuffer{}, &syncBuffer{}
	done := make(chan error, 1)
	go func() { done <- runChat(ctx, []string{"--session", sid}, chatEnv, in, out, errOut) }()
	prompts := func(n int) {
		t.Helper()
		select {
		case err := <-done:
			t.Fatalf("chat ended: %v\nstdout %q\nstderr %q", err, out, errOut)
		case <-waitMatch(out, regexp.MustCompile(`(?s)`+strings.Repeat(`you> .*`, n-1)+`you> `)):
		}
	}
	prompts(1)
	io.WriteString(typed, "anything else?\n")
	prompts(2)
	// The other client's turn ends.
	close(release)
	released = true
	if b, _ := io.ReadAll(resp.Body); !strings.Contains(string(b), `"stop_reason":"end_turn"`) {
		t.Fatalf("the other client's turn: %s", b)
	}
	io.WriteString(typed, "anything else?\n")
	prompts(3)
	typed.Close()
	if err := <-done; err != nil {
		t.Fatalf("chat: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	if !strings.Contains(errOut.String(), "turn_in_progress") || !strings.Contains(out.String(), "Anything else?") {
		t.Errorf("the refusal not said, or no reply after it:\nstdout %q\nstderr %q", out, errOut)
	}
}
