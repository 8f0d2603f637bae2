package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/server"
)

// mintedInstructions mints a secret for key with body and returns the
// instructions the voice provider was sent.
func (e *voiceEnv) mintedInstructions(t *testing.T, key, body string) string {
	t.Helper()
	var got minted
	if r := e.post(key, "/v1/realtime/session", body, nil, &got); r.status != 200 {
		t.Fatalf("mint %s = %d %s", body, r.status, r.body)
	}
	reqs := e.provider.Requests()
	s, _ := reqs[len(reqs)-1].Body["session"].(map[string]any)
	instr, _ := s["instructions"].(string)
	return instr
}

// TestRealtimeContext (both stores): the voice coach is told what the text coach
// knows, so that a call started in a conversation continues it: the
// user's notes (it has no tools to list them) and the end of the
// session's conversation, bounded, the caller's only.
func TestRealtimeContext(t *testing.T) {
	forEachBackend(t, testRealtimeContext)
}

func testRealtimeContext(t *testing.T, dsn string) {
	e := mustVoiceEnvOn(t, dsn, server.Limits{}, voiceKey)
	ctx := context.Background()
	key := e.alice.key
	e.MustNote(e.alice, "Prefers morning airport runs")
	sess := e.MustSession(e.alice) // "When should I drive?" / "Let me check." and a tool round
	if r := e.post(key, "/v1/sessions/"+sess.ID+"/messages", `{"role":"assistant","content":"Friday evening downtown, after the game.","source":"voice"}`, nil, nil); r.status != 201 {
		t.Fatalf("transcript = %d %s", r.status, r.body)
	}
	// Bob's words and notes are his own.
	e.MustNote(e.bob, "BOBNOTE dislikes airports")
	bobs, err := e.bob.c.CreateSession(ctx, "", "bob's")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.db.AppendMessages(ctx, e.bob.ID, bobs.ID, []*coachd.Message{{Role: coachd.RoleUser, Content: "BOBWORDS", Blocks: []coachd.Block{coachd.TextBlock("BOBWORDS")}}}); err != nil {
		t.Fatal(err)
	}

	t.Run("InSession", func(t *testing.T) {
		instr := e.mintedInstructions(t, key, `{"session_id":"`+sess.ID+`"}`)
		for _, want := range []string{voicePrompt, "Prefers morning airport runs", "Airport rush after 5pm", "When should I drive?", "Friday evening downtown, after the game."} {
			if !strings.Contains(instr, want) {
				t.Errorf("the voice coach was not told %q:\n%s", want, instr)
			}
		}
		if !strings.HasPrefix(instr, voicePrompt) {
			t.Errorf("the coach's prompt does not come first:\n%s", instr)
		}
		if strings.Contains(instr, "BOB") {
			t.Fatalf("another user's words reached alice's voice coach:\n%s", instr)
		}
	})
	t.Run("NewSession", func(t *testing.T) {
		// A new conversation: the notes, no conversation so far.
		instr := e.mintedInstructions(t, key, `{}`)
		if !strings.Contains(instr, "Prefers morning airport runs") || strings.Contains(instr, "When should I drive?") || strings.Contains(instr, "BOB") {
			t.Fatalf("a new session's voice coach was told:\n%s", instr)
		}
	})
	t.Run("Bounded", func(t *testing.T) {
		// A long conversation and many long notes: the instructions stay
		// within the bound, with the newest words in them.
		carol := e.MustUser("carol")
		for i := range 40 {
			if err := e.db.CreateNote(ctx, &coachd.Note{UserID: carol.ID, Type: "tip", Title: fmt.Sprintf("note %d", i), Content: strings.Repeat("n", 4000), Importance: 50}); err != nil {
				t.Fatal(err)
			}
		}
		long, err := carol.c.CreateSession(ctx, "", "long")
		if err != nil {
			t.Fatal(err)
		}
		var msgs []*coachd.Message
		for i := range 60 {
			role := coachd.RoleUser
			if i%2 == 1 {
				role = coachd.RoleAssistant
			}
			text := fmt.Sprintf("line %d %s", i, strings.Repeat("w", 8000))
			msgs = append(msgs, &coachd.Message{Role: role, Content: text, Blocks: []coachd.Block{coachd.TextBlock(text)}})
		}
		if err := e.db.AppendMessages(ctx, carol.ID, long.ID, msgs); err != nil {
			t.Fatal(err)
		}
		instr := e.mintedInstructions(t, carol.key, `{"session_id":"`+long.ID+`"}`)
		if max := len(voicePrompt) + agent.MaxVoiceContext; len(instr) > max {
			t.Fatalf("instructions of %d bytes, want at most %d", len(instr), max)
		}
		if !strings.Contains(instr, "line 59") || strings.Contains(instr, "line 0 ") {
			t.Fatalf("the conversation's end is not what was kept:\n%.300s", instr)
		}
	})
}
