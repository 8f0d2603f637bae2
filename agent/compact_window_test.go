package agent_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestOldPhotosDoNotCompact: compaction's thresholds are tokens of the
// history re-sent each round, and a photo older than the attachment
// window is not re-sent (a one-line note is). They counted every photo the
// session ever had at an image's price: a photo a day passed
// summarize_after in about five weeks, while what each request sent,
// as the fake bills it, stayed far below it, and the model summarized the
// conversation away for nothing.
func TestOldPhotosDoNotCompact(t *testing.T) {
	s := newSageSession(t) // the default compaction: summarize past 60,000 tokens
	summaries, most := 0, int64(0)
	s.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if strings.HasPrefix(req.LastUserText(), "Summarize our conversation") {
			summaries++
			return anthropictest.Text("The driver shares a dashboard photo every day.", 20)
		}
		return anthropictest.Text("Nice day. Keep the airport runs for the evening peak.", 20)
	})
	ctx := context.Background()
	for day := range 3 * agent.MaxHistoryAttachments {
		tr, err := s.runner.Prepare(ctx, agent.TurnRequest{User: s.user, SessionID: s.id, Agent: "sage",
			Message:     fmt.Sprintf("Day %d: here is my dashboard.", day+1),
			Attachments: []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", dayPhoto(t, day))}})
		if err != nil {
			t.Fatalf("day %d: %v", day, err)
		}
		res := tr.Run(ctx, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("day %d: %s %v", day, res.StopReason, res.Err)
		}
		s.id = res.SessionID
		reqs := s.fake.Requests()
		u := reqs[len(reqs)-1].Usage
		most = max(most, u.InputTokens+u.CacheReadInputTokens+u.CacheCreationInputTokens)
		s.clock.Advance(24 * time.Hour)
	}
	t.Logf("the largest request was %d tokens; %d summaries", most, summaries)
	if most < agent.DefaultSummarizeAfter/2 && summaries > 0 {
		t.Errorf("%d summary calls, though no request passed %d tokens (summarize_after: %d)", summaries, most, agent.DefaultSummarizeAfter)
	}
}
