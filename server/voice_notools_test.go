package server_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestRealtimeNoTools: a realtime voice session is minted without
// coachd's tools (the provider runs the call; no tool call comes back to
// coachd), yet the coach's prompt names them ("use save_note to remember
// what matters, list_notes to recall it"). The voice coach is told it
// has none of them, by name, after its prompt, so that it does not
// promise a note it cannot save nor call a tool nobody answers.
func TestRealtimeNoTools(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	instr := e.mintedInstructions(t, e.alice.key, `{}`)
	reqs := e.provider.Requests()
	sess, _ := reqs[len(reqs)-1].Body["session"].(map[string]any)
	if _, ok := sess["tools"]; ok {
		t.Fatalf("the session was minted with tools %v: the coach is told it has none", sess["tools"])
	}
	i := strings.Index(instr, "no tools")
	if i < 0 {
		t.Fatalf("the voice coach is not told it has no tools:\n%s", instr)
	}
	if !strings.HasPrefix(instr, voicePrompt) || i < len(voicePrompt) {
		t.Errorf("the coach's prompt does not come first:\n%s", instr)
	}
	for _, name := range []string{"save_note", "list_notes", "show_options"} {
		if !strings.Contains(instr[i:], name) {
			t.Errorf("the voice coach is not told %s is out of reach:\n%s", name, instr)
		}
	}
}
