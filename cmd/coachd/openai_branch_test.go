package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestOpenAIClientRegenerateAndEdit: the official openai package resends
// a conversation up to a good reply it regenerates, then with that
// reply's question edited: each time the model sees the history the
// client holds, never the reply or question it left, and the new branch
// is a session of its own.
func TestOpenAIClientRegenerateAndEdit(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "openaiclient"), "openai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	fake.Enqueue(anthropictest.Text("Airport first.", 5), anthropictest.Text("Then downtown.", 5),
		anthropictest.Text("Then the stadium.", 5), anthropictest.Text("Lunch at noon.", 5))
	cmd := exec.Command(node, filepath.Join(dir, "branch.mjs"), p.url, p.key, "default")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	type reply struct{ Text, Session string }
	var out struct{ First, Second, Regenerated, Edited reply }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.Regenerated.Text != "Then the stadium." || out.Edited.Text != "Lunch at noon." ||
		out.Second.Session != out.First.Session || out.Regenerated.Session == out.First.Session ||
		out.Edited.Session == out.First.Session || out.Edited.Session == out.Regenerated.Session {
		t.Errorf("replies: %s", raw)
	}
	reqs := fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests", len(reqs))
	}
	for i, last := range map[int]string{2: "And after?", 3: "What about lunch?"} {
		msgs := reqs[i].Messages()
		if len(msgs) != 3 || msgs[1].Blocks[0].Text != "Airport first." || reqs[i].LastUserText() != last {
			t.Errorf("request %d's history: %+v", i, msgs)
		}
	}
}

// TestOpenAIClientSharedRetry: two chats open with the same exchange, so
// its fingerprint is shared and the first chat's next message goes on in
// a copy of the session. The model is busy, and the official openai
// package retries the completion by itself: the retry must run in the
// copy the first attempt made (its message stored there already), not
// make a second copy and leave the first one behind, unanswered.
func TestOpenAIClientSharedRetry(t *testing.T) {
	node, dir := needNodePackage(t, filepath.Join("testdata", "openaiclient"), "openai")
	fake := anthropictest.NewServer()
	defer fake.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	overloaded := anthropictest.Text("never sent", 5).ErrorAfter(0, "", "")
	fake.Enqueue(anthropictest.Text("Hello.", 5), anthropictest.Text("Hello.", 5), overloaded, anthropictest.Text("Here now.", 5))
	cmd := exec.Command(node, filepath.Join(dir, "sharedretry.mjs"), p.url, p.key, "default")
	cmd.Dir = dir
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v\n%s\n%s", err, raw, p.stderr)
	}
	type reply struct{ Text, Session string }
	var out struct{ A, B, Retried reply }
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	if out.Retried.Text != "Here now." || out.Retried.Session == out.A.Session || out.Retried.Session == out.B.Session {
		t.Fatalf("replies: %s", raw)
	}
	// The retried request's history: the exchange, the message once.
	reqs := fake.Requests()
	msgs := reqs[len(reqs)-1].Messages()
	if len(msgs) != 3 || msgs[1].Blocks[0].Text != "Hello." || msgs[2].Blocks[len(msgs[2].Blocks)-1].Text != "Again?" {
		t.Errorf("the retried request's history: %+v", msgs)
	}
	// The two chats and the first one's copy: no copy left unanswered.
	var sessions struct{ Sessions []struct{ ID string } }
	call(t, "GET", p.url+"/v1/sessions", p.key, "", nil, &sessions)
	if len(sessions.Sessions) != 3 {
		t.Errorf("%d sessions, want the two chats and the one copy: %+v", len(sessions.Sessions), sessions.Sessions)
	}
	var stored struct {
		Messages []struct{ Role, Content string }
	}
	call(t, "GET", p.url+"/v1/sessions/"+out.Retried.Session+"/messages", p.key, "", nil, &stored)
	if n := len(stored.Messages); n != 4 {
		t.Errorf("the copy holds %d messages, want 4: %+v", n, stored.Messages)
	}
}
