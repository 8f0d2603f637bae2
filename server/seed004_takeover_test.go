package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSeed004NewRequestWhileTurnRuns: seed 004's client gives up on a
// stream that went quiet ("Client timeout: Recommended 60 second timeout
// for idle connections") and, "If disconnected, create a new request":
// the same {message, session_id}. The server may not have seen the old
// connection go (a phone that lost its network sends no FIN), so its
// turn still ran, and the new request was refused 409 turn_in_progress,
// which the seed's reader throws, until that turn ended (up to its
// 60 s). The message sent again while its own turn runs now stops that
// turn and runs it again, the message stored once; another message is
// still refused.
func TestSeed004NewRequestWhileTurnRuns(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	// The first answer never ends on its own.
	e.fake.Enqueue(anthropictest.Text("Here is a long plan for your legs", 4).StallAfter(4), anthropictest.Text("Legs, push, pull.", 6))
	req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/chat/stream", strings.NewReader(`{"message":"plan my week","session_id":null}`))
	req.Header.Set("Authorization", "Bearer "+e.alice.key)
	req.Header.Set("Content-Type", "application/json")
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// The old stream stays open, unread: to the server its client is there.
	defer resp.Body.Close()
	sid := resp.Header.Get("X-Coachd-Session-Id")
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && sc.Text() != "event: content_delta" {
	}
	if sid == "" {
		t.Fatalf("first stream: %d, no session", resp.StatusCode)
	}

	other := e.chat(ctx, e.alice.key, "", `{"message":"something else","session_id":"`+sid+`"}`)
	if other.status != 409 || !strings.Contains(string(other.raw), "turn_in_progress") {
		t.Fatalf("another message while the turn runs: %d, want 409\n%s", other.status, other.raw)
	}
	again := e.chat(ctx, e.alice.key, "", `{"message":"plan my week","session_id":"`+sid+`"}`)
	if again.status != 200 || !strings.Contains(string(again.raw), "event: message_end") || seed004Reply(again) != "Legs, push, pull." {
		t.Fatalf("the new request: %d\n%s", again.status, again.raw)
	}
	if n := userTexts(t, e, "plan my week"); n != 1 {
		t.Errorf("the model saw the message %d times, want 1", n)
	}
}

// seed004Reply is the text a stream's content_delta events add up to.
func seed004Reply(s stream) string {
	var b strings.Builder
	for _, ev := range s.named("content_delta") {
		var d struct{ Text string }
		json.Unmarshal(ev.Data, &d)
		b.WriteString(d.Text)
	}
	return b.String()
}
