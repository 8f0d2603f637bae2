package agent_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// dayPhoto is a 1000×750 photo, different for each day (billed 1,000
// tokens, a few KB of PNG).
func dayPhoto(tb testing.TB, day int) []byte {
	tb.Helper()
	img := image.NewGray(image.Rect(0, 0, 1000, 750))
	img.Set(day, day, color.White)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// TestAttachmentWindowKeepsCache: only the newest attachments of a
// session are re-sent (agent.MaxHistoryAttachments). Each move of the
// window turns its oldest image into a text note, which changes an early
// message and so rewrites the prompt cache from there on: moved by one
// with every new photo, every turn past the window re-cached the whole
// history after its oldest image. The window moves in steps instead: of
// the turns after it fills, at most one in MaxHistoryAttachments/2
// re-caches the history the turn before it cached.
func TestAttachmentWindowKeepsCache(t *testing.T) {
	s := newSageSessionIn(t, coachd.UnitTokens, func(a *agent.Agent) {
		a.Compaction = &agent.Compaction{ShortenAfter: 10_000_000, SummarizeAfter: 10_000_000}
	})
	s.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		s.clock.Advance(3 * time.Second)
		return anthropictest.Text("Got it: that shift looks busier than yesterday's. Keep the airport run for the evening.", 30)
	})
	const turns = 2*agent.MaxHistoryAttachments + 10
	ctx := context.Background()
	var usage []coachd.Usage
	var total coachd.Usage
	for i := range turns {
		tr, err := s.runner.Prepare(ctx, agent.TurnRequest{User: s.user, SessionID: s.id, Agent: "sage",
			Message:     fmt.Sprintf("Day %d: here is my earnings screen.", i+1),
			Attachments: []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", dayPhoto(t, i))}})
		if err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		res := tr.Run(ctx, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("turn %d: %s %v", i, res.StopReason, res.Err)
		}
		s.id = res.SessionID
		usage = append(usage, res.Usage)
		total = total.Add(res.Usage)
		s.clock.Advance(time.Minute)
	}
	var recached []int
	for i := agent.MaxHistoryAttachments; i < turns; i++ {
		prev, next := usage[i-1], usage[i]
		if next.CacheReadInputTokens < prev.CacheReadInputTokens+prev.CacheCreationInputTokens {
			recached = append(recached, i)
		}
	}
	in := total
	in.OutputTokens = 0
	t.Logf("%d turns: %+v, input billed as %.0f tokens; turns that re-cached the history: %v",
		turns, total, coachd.Weighted(anthropic.DefaultModel, in), recached)
	if step := agent.MaxHistoryAttachments / 2; len(recached) > (turns-agent.MaxHistoryAttachments+step-1)/step {
		t.Errorf("%d of the %d turns past the window re-cached the history, want at most one in %d",
			len(recached), turns-agent.MaxHistoryAttachments, step)
	}
}
