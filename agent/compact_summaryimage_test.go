package agent_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestSummarySendsNoPhotos: the compaction's summary call asks for what
// was said, decided and done; the photos of the turns it summarizes were
// answered when they were sent, and the answers are in the history. It
// sent them again, each billed as an image (about 1,300 tokens for a
// 1000x1000 photo), once more for a summary of text. Each is now a short
// note in the summary request, as for an attachment outside the window.
func TestSummarySendsNoPhotos(t *testing.T) {
	s := newSageSessionIn(t, coachd.UnitTokens, func(a *agent.Agent) {
		a.Compaction = &agent.Compaction{SummarizeAfter: 6000, ShortenAfter: 10_000_000, KeepTurns: 2}
	})
	img := image.NewRGBA(image.Rect(0, 0, 1000, 1000))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+3] = byte(i/4000), 255
	}
	var photo bytes.Buffer
	if err := png.Encode(&photo, img); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for i := range sageTurns {
		req := agent.TurnRequest{User: s.user, SessionID: s.id, Agent: "sage", Message: sageTurns[i],
			Attachments: []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", photo.Bytes())}}
		tr, err := s.runner.Prepare(ctx, req)
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if res := tr.Run(ctx, &sink{}); res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("turn %d: stop %q (%v)", i, res.StopReason, res.Err)
		} else {
			s.id = res.SessionID
		}
		s.clock.Advance(time.Minute)
		for _, r := range s.fake.Requests() {
			if !strings.HasPrefix(r.LastUserText(), "Summarize our conversation") {
				continue
			}
			u := r.Usage
			images := strings.Count(string(r.Raw), `"type":"image"`)
			t.Logf("turn %d: the summary call sent %d photos; input %d tokens (%d uncached, %d cache read, %d cache write)", i, images,
				u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens, u.InputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens)
			if images > 0 {
				t.Fatalf("the summary call sent %d photos again", images)
			}
			if !strings.Contains(string(r.Raw), "sent earlier in this conversation") {
				t.Fatal("the summary call does not say the user sent photos")
			}
			return
		}
	}
	t.Fatal("no summary call: the test does not reach summarize_after")
}
