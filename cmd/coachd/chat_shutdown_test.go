package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestChatJSONCutByShutdown: POST /v1/chat running when the shutdown
// grace ran out answered 200 with the partial text and stop_reason
// "aborted", no error: the same document as a user's stop, so an app
// took a reply cut short by a restart for the whole answer. The stream
// and /v1/chat/completions say server_shutdown; so does its error now.
func TestChatJSONCutByShutdown(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--shutdown-grace", "200ms")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	fake.Enqueue(anthropictest.Text("Halfway through a long answer", 4).StallAfter(6))
	type result struct {
		status int
		body   struct {
			StopReason string `json:"stop_reason"`
			Text       string `json:"text"`
			Error      *struct {
				Code string `json:"code"`
			} `json:"error"`
		}
		err error
	}
	done := make(chan result, 1)
	go func() {
		req, _ := http.NewRequestWithContext(context.Background(), "POST", p.url+"/v1/chat", bytes.NewReader([]byte(`{"message":"tell me everything"}`)))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		var res result
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			res.err = err
		} else {
			res.status = resp.StatusCode
			res.err = json.NewDecoder(resp.Body).Decode(&res.body)
			resp.Body.Close()
		}
		done <- res
	}()
	// The turn is running once the fake has its request: it streams part
	// of the reply, then stalls.
	for deadline := time.Now().Add(10 * time.Second); len(fake.Requests()) < 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the turn never reached the model")
		}
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("run = %v, want nil", err)
	}
	res := <-done
	if res.err != nil || res.status != 200 || res.body.StopReason != "aborted" {
		t.Fatalf("POST /v1/chat: %d %+v %v", res.status, res.body, res.err)
	}
	if res.body.Error == nil || res.body.Error.Code != "server_shutdown" {
		t.Errorf("a reply cut by the shutdown reads as whole: %+v", res.body)
	}
}
