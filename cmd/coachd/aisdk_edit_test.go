package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAISDKEditAndRegenerate plays useChat's edit of an earlier message
// (sendMessage with its messageId) and regenerate() of the reply the chat
// has: as on /v1/chat/completions, the model sees the history the chat
// shows, never the question and reply the edit left, and a Regenerate
// gets a new reply to the same question.
func TestAISDKEditAndRegenerate(t *testing.T) {
	node, dir, fake, p := startAISDK(t)
	fake.Enqueue(anthropictest.Text("Airport first.", 4), anthropictest.Text("Then downtown.", 4),
		anthropictest.Text("Lunch at noon.", 4), anthropictest.Text("Lunch at one.", 4))
	out := runEditScript(t, node, dir, p, "edit.mjs")
	var chat []string
	for _, m := range out.Messages {
		chat = append(chat, m.Role+": "+m.Text)
	}
	if want := []string{"user: Plan my night", "assistant: Airport first.", "user: What about lunch?", "assistant: Lunch at one."}; !slices.Equal(chat, want) {
		t.Errorf("the chat: %q, want %q", chat, want)
	}
	reqs := fake.Requests()
	if len(reqs) != 4 {
		t.Errorf("%d model calls, want 4", len(reqs))
	}
	want := []string{"user: Plan my night", "assistant: Airport first.", "user: What about lunch?"}
	for i := 2; i < len(reqs); i++ {
		var got []string
		for _, m := range reqs[i].Messages() {
			var sb strings.Builder
			for _, b := range m.Blocks {
				sb.WriteString(b.Text)
			}
			got = append(got, string(m.Role)+": "+sb.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("model call %d's history: %q, want %q", i, got, want)
		}
	}
}

// TestAISDKSetMessagesEdit plays an app's own edit with useChat:
// setMessages drops the chat's last exchange, then sendMessage sends the
// new text without a messageId. The model must see the chat as it shows,
// not the question and reply the app dropped, on that turn and the next.
func TestAISDKSetMessagesEdit(t *testing.T) {
	node, dir, fake, p := startAISDK(t)
	fake.Enqueue(anthropictest.Text("Airport first.", 4), anthropictest.Text("Then downtown.", 4),
		anthropictest.Text("Lunch at noon.", 4), anthropictest.Text("Welcome.", 4))
	runEditScript(t, node, dir, p, "setmessages.mjs")
	reqs := fake.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model calls, want 4", len(reqs))
	}
	want := []string{"user: Plan my night", "assistant: Airport first.", "user: What about lunch?", "assistant: Lunch at noon.", "user: Thanks"}
	for i, w := range [][]string{want[:3], want} {
		var got []string
		for _, m := range reqs[2+i].Messages() {
			var sb strings.Builder
			for _, b := range m.Blocks {
				sb.WriteString(b.Text)
			}
			got = append(got, string(m.Role)+": "+sb.String())
		}
		if !slices.Equal(got, w) {
			t.Errorf("model call %d's history: %q, want %q", 2+i, got, w)
		}
	}
}

// editScript is what an edit script prints: each step's error (null
// when it went through) and the chat's messages at the end.
type editScript struct {
	Errors   []*string
	Messages []struct{ Role, Text string }
}

// runEditScript runs script and fails t for each step that erred.
func runEditScript(t *testing.T, node, dir string, p *proc, script string) editScript {
	t.Helper()
	raw := runAISDKScript(t, node, dir, p, script)
	var out editScript
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	for i, e := range out.Errors {
		if e != nil {
			t.Errorf("step %d: %s", i, *e)
		}
	}
	return out
}
