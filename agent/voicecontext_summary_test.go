package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestVoiceContextSummary: a long session's compaction stores the
// coach's summary of earlier turns as a user-role message (metadata
// kind "summary"). The voice coach was told it as the user's words
// ("User: <conversation_summary> ..."), between the user's question and
// the reply; it is told it as a summary, without the wrapper.
func TestVoiceContextSummary(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	sess := &coachd.Session{UserID: h.user.ID, Agent: h.agent.Name, Status: coachd.SessionActive}
	if err := h.store.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	text := func(role coachd.Role, s string) *coachd.Message {
		return &coachd.Message{Role: role, Content: s, Blocks: []coachd.Block{coachd.TextBlock(s)}}
	}
	summary := text(coachd.RoleUser, "<conversation_summary>\nAda walks every morning and wants to run by June.\n</conversation_summary>")
	summary.Metadata = json.RawMessage(`{"kind":"summary","through_seq":2}`)
	msgs := []*coachd.Message{
		text(coachd.RoleUser, "Plan my week."), text(coachd.RoleAssistant, "Start with walks."),
		text(coachd.RoleUser, "And after a week?"), summary, text(coachd.RoleAssistant, "Add one short run."),
	}
	if err := h.store.AppendMessages(ctx, h.user.ID, sess.ID, msgs); err != nil {
		t.Fatal(err)
	}
	got, err := h.runner.VoiceContext(ctx, h.user, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "User:") && strings.Contains(line, "June") {
			t.Fatalf("the coach's summary was told as the user's words:\n%s", got)
		}
	}
	if strings.Contains(got, "conversation_summary") {
		t.Errorf("the summary's wrapper reached the voice coach:\n%s", got)
	}
	for _, want := range []string{"User: And after a week?", "Summary of earlier turns: Ada walks every morning and wants to run by June.", "Coach: Add one short run."} {
		if !strings.Contains(got, want) {
			t.Errorf("the voice coach was not told %q:\n%s", want, got)
		}
	}
}
