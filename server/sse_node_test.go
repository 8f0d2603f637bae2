package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// TestIndependentSSEClient reads a streamed turn with the eventsource npm
// package under Node, a client that shares no code with coachd, and checks
// it sees exactly the events coachd's own reader sees.
func TestIndependentSSEClient(t *testing.T) {
	dir, _ := filepath.Abs("testdata/sseclient")
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "eventsource"))
	if err != nil || modErr != nil {
		msg := "needs node and the eventsource package: npm ci --prefix server/testdata/sseclient"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	e := MustChatEnv(t, nil)
	replies := func() {
		e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Line one\nline two: “quotes” ünïcode ", 7),
			anthropictest.ToolUse("toolu_n", "list_notes", `{}`)), anthropictest.Text("Done.", 2))
	}
	body := `{"message":"hello from node"}`

	replies()
	cmd := exec.Command(node, filepath.Join(dir, "client.mjs"), e.url+"/v1/chat/stream", e.alice.key, body)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node client: %v\n%s", err, out)
	}
	var fromNode []client.Event
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var line struct{ Event, Data string }
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("node output %q: %v", sc.Text(), err)
		}
		fromNode = append(fromNode, client.Event{Name: line.Event, Data: []byte(line.Data)})
	}

	replies()
	s := e.chat(context.Background(), e.alice.key, "", body)
	if len(fromNode) != len(s.events) || len(fromNode) < 8 {
		t.Fatalf("node saw %d events, coachd's reader %d:\n%s", len(fromNode), len(s.events), out)
	}
	for i, ev := range s.events {
		n := fromNode[i]
		if n.Name != ev.Name || !sameShape(t, n.Data, ev.Data) {
			t.Errorf("event %d: node %s %s, go %s %s", i, n.Name, n.Data, ev.Name, ev.Data)
		}
	}
}

// sameShape compares two events' JSON ignoring the values that differ
// between two turns (ids, timings, token counts).
func sameShape(t *testing.T, a, b []byte) bool {
	var ma, mb map[string]any
	if json.Unmarshal(a, &ma) != nil || json.Unmarshal(b, &mb) != nil {
		return false
	}
	for _, k := range []string{"session_id", "message_id", "latency_ms", "result", "input_tokens", "output_tokens",
		"tokens_used", "budget_remaining", "cache_read_input_tokens", "cache_creation_input_tokens"} {
		delete(ma, k)
		delete(mb, k)
	}
	return mustJSONString(t, ma) == mustJSONString(t, mb)
}
