package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// listCounter is the real store, counting the bytes of the messages
// ListMessages reads.
type listCounter struct {
	coachd.Store
	mu    sync.Mutex
	bytes int
}

func (c *listCounter) ListMessages(ctx context.Context, userID, sessionID string, page coachd.Page) ([]*coachd.Message, string, error) {
	msgs, next, err := c.Store.ListMessages(ctx, userID, sessionID, page)
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range msgs {
		c.bytes += m.Bytes()
	}
	return msgs, next, err
}

// TestVoiceContextReadsNoAttachments: minting a voice session reads the
// session's last messages for their words only (spokenHistory), yet it
// read them whole: a conversation of photos and PDFs was megabytes read
// and decoded at every mint, to tell the voice coach a few lines. The
// photos' data is left out of the read, and the context is the one the
// same conversation without photos gives.
func TestVoiceContextReadsNoAttachments(t *testing.T) {
	h := newHarness(t, agent.Limits{})
	ctx := context.Background()
	photo := noisyPhoto(t, 200, 1) // about 120 KB, 160 KB as base64
	session := func(photos bool) string {
		sess := &coachd.Session{UserID: h.user.ID, Agent: h.agent.Name, Status: coachd.SessionActive}
		if err := h.store.CreateSession(ctx, sess); err != nil {
			t.Fatal(err)
		}
		var msgs []*coachd.Message
		for i := range 12 {
			said := fmt.Sprintf("Day %d: my route, photographed.", i)
			user := &coachd.Message{Role: coachd.RoleUser, Content: said, Blocks: []coachd.Block{coachd.TextBlock(said)}}
			if photos {
				user.Blocks = append([]coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", photo)}, user.Blocks...)
			}
			reply := fmt.Sprintf("Day %d looks steady.", i)
			msgs = append(msgs, user, &coachd.Message{Role: coachd.RoleAssistant, Content: reply, Blocks: []coachd.Block{coachd.TextBlock(reply)}})
		}
		if err := h.store.AppendMessages(ctx, h.user.ID, sess.ID, msgs); err != nil {
			t.Fatal(err)
		}
		return sess.ID
	}
	plain, photos := session(false), session(true)
	counted := &listCounter{Store: h.store}
	r := h.newRunner(tools.Builtins(), func(string) (*agent.Agent, bool) { return h.agent, true }, func(c *agent.Config) { c.Store = counted })

	want, err := r.VoiceContext(ctx, h.user, plain)
	if err != nil {
		t.Fatal(err)
	}
	counted.bytes = 0
	got, err := r.VoiceContext(ctx, h.user, photos)
	if err != nil {
		t.Fatal(err)
	}
	if got != want || !strings.Contains(got, "Day 11 looks steady.") {
		t.Errorf("the voice context of the conversation with photos:\n%s\nwant, as without them:\n%s", got, want)
	}
	if counted.bytes > len(photo) {
		t.Fatalf("a mint read %d bytes of messages (photos of %d bytes each) for a context of %d", counted.bytes, len(photo), len(got))
	}
}
