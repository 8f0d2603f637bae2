package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// BenchmarkPhotoTurn is a text turn in a session whose user sent six
// 3 MiB photos, so that the turn re-sends a full attachment window
// (about 20 MiB of base64) in its request: what coachd spends reading,
// sizing and encoding them, beside the fake's parse of the same body.
//
//	go test ./agent -run '^$' -bench PhotoTurn -benchmem
func BenchmarkPhotoTurn(b *testing.B) {
	h := newHarnessB(b)
	h.fake.SetRecording(false)
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("Looks like a busy corner.", 8)
	})
	ctx := context.Background()
	sess := &coachd.Session{UserID: h.user.ID, Agent: agent.DefaultAgent().Name, Title: "photos"}
	if err := h.store.CreateSession(ctx, sess); err != nil {
		b.Fatal(err)
	}
	var msgs []*coachd.Message
	for i := range 6 {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", []byte("\xff\xd8\xff"+strings.Repeat(string(rune('a'+i)), 3<<20)))
		msgs = append(msgs,
			&coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("what about this corner?")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Quiet at noon.")}})
	}
	if err := h.store.AppendMessages(ctx, h.user.ID, sess.ID, msgs); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sess.ID, Message: "and now?"})
		if err != nil {
			b.Fatal(err)
		}
		if res := tr.Run(ctx, &sink{}); res.Err != nil {
			b.Fatal(res.Err)
		}
	}
}
