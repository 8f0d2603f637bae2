package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/cutproxy"
)

// TestIndependentSSEClient reads a streamed turn with the eventsource npm
// package under Node, a client that shares no code with coachd, and checks
// it sees exactly the events coachd's own reader sees.
func TestIndependentSSEClient(t *testing.T) {
	node, dir := needSSEClient(t)
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

// TestEventSourceFollowsAcrossCut: an EventSource client (the eventsource
// package under Node) follows a session with GET and a stream token; its
// connection is cut mid-reply; it reconnects by itself with Last-Event-ID
// and reassembles exactly the stored reply, no event twice.
func TestEventSourceFollowsAcrossCut(t *testing.T) {
	node, dir := needSSEClient(t)
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	_, streamURL := e.mintStreamToken(t, e.alice.key, sess.ID)
	u, _ := url.Parse(e.url)
	proxy := cutproxy.New(t, u.Host)
	cmd := exec.Command(node, filepath.Join(dir, "follow.mjs"), proxy.URL()+streamURL)
	cmd.Dir = dir
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	type line struct {
		Open    int    `json:"open"`
		Dropped bool   `json:"dropped"`
		Event   string `json:"event"`
		Data    string `json:"data"`
		ID      string `json:"id"`
	}
	next := func() line {
		if !lines.Scan() {
			t.Fatalf("node ended: %v", lines.Err())
		}
		var l line
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			t.Fatalf("%q: %v", lines.Text(), err)
		}
		return l
	}
	if l := next(); l.Open != 1 {
		t.Fatalf("first line %+v", l)
	}
	reply := "Leave at six, take the tollway, and park at the cell phone lot until the first wave lands."
	e.fake.Enqueue(anthropictest.Text(reply, 5).Paced(0, 20*time.Millisecond))
	go e.chat(ctx, e.alice.key, "", `{"message":"go","session_id":"`+sess.ID+`"}`)
	var text strings.Builder
	var ids []string
	opens, cut := 1, false
	for {
		l := next()
		switch {
		case l.Open > 0:
			opens = l.Open
			continue
		case l.Dropped:
			continue
		}
		if len(ids) > 0 && l.ID == ids[len(ids)-1] {
			t.Fatalf("event %s twice", l.ID)
		}
		ids = append(ids, l.ID)
		if l.Event == "content_delta" {
			var d struct{ Text string }
			json.Unmarshal([]byte(l.Data), &d)
			text.WriteString(d.Text)
			if !cut {
				cut = true
				proxy.Cut()
			}
		}
		if l.Event == "message_end" {
			break
		}
	}
	if opens != 2 || text.String() != reply {
		t.Fatalf("opens %d, text %q", opens, text.String())
	}
	msgs, _, _ := e.alice.c.Messages(ctx, sess.ID, coachd.Page{})
	if last := msgs[len(msgs)-1]; last.Content != reply || last.Partial {
		t.Errorf("stored %q partial=%v", last.Content, last.Partial)
	}
}

// needSSEClient returns node and the directory of the eventsource package's
// client scripts; without them the test is skipped (failed on CI).
func needSSEClient(t *testing.T) (node, dir string) {
	t.Helper()
	dir, _ = filepath.Abs("testdata/sseclient")
	node, err := exec.LookPath("node")
	_, modErr := os.Stat(filepath.Join(dir, "node_modules", "eventsource"))
	if err != nil || modErr != nil {
		msg := "needs node and the eventsource package: npm ci --prefix server/testdata/sseclient"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return node, dir
}
