package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestStreamSurvivesReplicaKill: two replicas on one Postgres. A turn runs
// on A; a client follows the session from B and sees A's text live; A is
// SIGKILLed mid-turn; the client on B gets a retryable turn_interrupted
// error — a terminal event, never a silent stop.
func TestStreamSurvivesReplicaKill(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()}
	args := []string{"--db", dsn, "--admin-key", testAdminKey, "--rate-limit", "off"}
	a, b := MustStart(t, env, args...), MustStart(t, env, args...)
	_, key := mustAPIUser(t, a.url, `{"name":"driver"}`)
	var sess struct{ ID string }
	if st := call(t, "POST", a.url+"/v1/sessions", key, `{"title":"tonight"}`, nil, &sess); st != 201 {
		t.Fatalf("session: %d", st)
	}
	fake.Enqueue(anthropictest.Text("Head to the airport first, then downtown", 4).StallAfter(6))

	// A's own client, which the kill cuts too.
	go func() {
		req, _ := http.NewRequest("POST", a.url+"/v1/chat/stream", strings.NewReader(`{"message":"plan","session_id":"`+sess.ID+`"}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(fake.Requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}

	req, _ := http.NewRequest("GET", b.url+"/v1/sessions/"+sess.ID+"/stream", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("follow on B: %v %v", resp, err)
	}
	defer resp.Body.Close()
	events := make(chan client.Event, 100)
	go func() {
		defer close(events)
		er := client.NewEventReader(bufio.NewReader(resp.Body))
		for {
			ev, err := er.Next()
			if err != nil {
				return
			}
			events <- ev
			if ev.Name == "error" || ev.Name == "message_end" {
				return
			}
		}
	}()
	next := func(within time.Duration) (client.Event, bool) {
		select {
		case ev, ok := <-events:
			return ev, ok
		case <-time.After(within):
			t.Fatalf("no event on B within %s", within)
		}
		return client.Event{}, false
	}
	// A's text reaches the client on B.
	var text string
	for text == "" {
		ev, ok := next(10 * time.Second)
		if !ok {
			t.Fatal("B's stream ended before A's text came")
		}
		if ev.Name == "content_delta" {
			var d struct{ Text string }
			json.Unmarshal(ev.Data, &d)
			text += d.Text
		}
	}
	a.kill()
	for {
		ev, ok := next(30 * time.Second)
		if !ok {
			t.Fatal("B's stream stopped silently after A was killed")
		}
		if ev.Name == "content_delta" {
			continue
		}
		var d struct {
			Type      string `json:"type"`
			Retryable bool   `json:"retryable"`
		}
		json.Unmarshal(ev.Data, &d)
		if ev.Name != "error" || d.Type != "turn_interrupted" || !d.Retryable || ev.ID == "" {
			t.Fatalf("after the kill: %s %s (id %q)", ev.Name, ev.Data, ev.ID)
		}
		t.Logf("B ended the stream with %s %s after %q", ev.Name, ev.Data, text)
		return
	}
}
