package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSeed004Reconnect: seed 004 says "If disconnected, create a new
// request (SSE does not support resumption)". A fitness client whose
// stream broke mid-reply sends its message again on the same session; that
// request must run, not meet a turn_in_progress held by a turn nobody can
// read any more.
func TestSeed004Reconnect(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	app := fitnessApp(t)
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "FITNESS_API_URL=" + app.URL},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", filepath.Join("..", "..", "examples", "fitness"), "--demo",
		"--webhook-allow", "127.0.0.1/32", "--rate-limit", "off")
	// The first answer never ends on its own: only its client leaving can
	// end it.
	fake.Enqueue(anthropictest.Text("Here is a long plan for your legs", 4).StallAfter(4), anthropictest.Text("Legs, push, pull.", 6))

	streamReq := func(body string) *http.Request {
		req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.key)
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	// The seed's client: {message, session_id: null} on the first send.
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(streamReq(`{"message":"plan my week","session_id":null}`))
	if err != nil {
		t.Fatal(err)
	}
	sid, event := seed004ReadUntil(resp.Body, "content_delta")
	if resp.StatusCode != 200 || sid == "" || event != "content_delta" {
		t.Fatalf("first stream: %d, session %q, last event %q", resp.StatusCode, sid, event)
	}
	// The network drops the stream.
	resp.Body.Close()
	tr.CloseIdleConnections()

	// The client creates a new request, as the seed says: one. The server
	// may not have noticed the first one is gone; the turn it finds running
	// is the message's own, which it stops and runs again.
	status, _, body := post(t, p.url+"/v1/chat/stream", p.key, `{"message":"plan my week","session_id":"`+sid+`"}`)
	if text := seed004Text(string(body)); status != 200 || !strings.Contains(string(body), "event: message_end") || text != "Legs, push, pull." {
		t.Fatalf("the new request: %d %s", status, body)
	}
}

// seed004Text is the reply a stream's content_delta events add up to.
func seed004Text(stream string) string {
	var b strings.Builder
	for _, block := range strings.Split(stream, "\n\n") {
		if !strings.Contains(block, "event: content_delta\n") {
			continue
		}
		for _, line := range strings.Split(block, "\n") {
			var d struct{ Text string }
			if data, ok := strings.CutPrefix(line, "data: "); ok && json.Unmarshal([]byte(data), &d) == nil {
				b.WriteString(d.Text)
			}
		}
	}
	return b.String()
}

// seed004ReadUntil reads seed 004's stream as its client does until the
// event until (or the stream's end): the session id message_start gave,
// and the last event read.
func seed004ReadUntil(body io.Reader, until string) (sid, event string) {
	sc := bufio.NewScanner(body)
	for sc.Scan() && event != until {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "message_start":
			var d struct {
				SessionID string `json:"session_id"`
			}
			json.Unmarshal([]byte(strings.TrimPrefix(line, "data: ")), &d)
			sid = d.SessionID
		}
	}
	return sid, event
}
