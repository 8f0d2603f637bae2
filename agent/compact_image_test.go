package agent_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestPhotoDoesNotCompact: an image costs the model about 1,600 tokens
// however many bytes its base64 takes, so one phone photo in a short
// session is no reason to compact it. The compaction thresholds counted
// the photo's base64 as text (300 KB: about 130,000 tokens, past the
// default summarize_after of 60,000): every turn while the photo was among
// the last keep_turns made an extra summary call, and the conversation
// before it was summarized away after a few messages.
func TestPhotoDoesNotCompact(t *testing.T) {
	s := newSageSession(t) // the Sage agent's default compaction
	var mu sync.Mutex
	summaries := 0
	s.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		s.clock.Advance(3 * time.Second)
		if strings.HasPrefix(req.LastUserText(), "Summarize our conversation") {
			mu.Lock()
			summaries++
			mu.Unlock()
			return anthropictest.Text("Maya shared a photo and talked about her day.", 20)
		}
		return anthropictest.Text("Thanks for sharing that. How does it feel to look at it now?", 20)
	})
	// A photo's worth of bytes that PNG cannot squeeze: about 300 KB.
	img := image.NewRGBA(image.Rect(0, 0, 280, 280))
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rnd.UintN(256))
	}
	var photo bytes.Buffer
	if err := png.Encode(&photo, img); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range 6 {
		req := agent.TurnRequest{User: s.user, SessionID: s.id, Agent: "sage", Message: sageTurns[i]}
		if i == 1 {
			req.Attachments = []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", photo.Bytes())}
		}
		tr, err := s.runner.Prepare(ctx, req)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if res := tr.Run(ctx, &sink{}); res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("turn %d: stop %q (%v)", i, res.StopReason, res.Err)
		} else {
			s.id = res.SessionID
		}
		s.clock.Advance(20 * time.Second)
	}
	if summaries > 0 {
		t.Errorf("%d summary calls in a six-message session with one %d KB photo, want none", summaries, photo.Len()>>10)
	}
	reqs := s.fake.Requests()
	if last := string(reqs[len(reqs)-1].Raw); !strings.Contains(last, sageTurns[0]) || !strings.Contains(last, `"type":"image"`) {
		t.Error("the last request lost the first message or the photo")
	}
}
