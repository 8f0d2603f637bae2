package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestCompactionDenseHistory: the compaction thresholds are tokens, and
// a history in Chinese bills about a token a character, not a token every
// four bytes (three bytes a character). The thresholds counted four bytes
// a token, so a dense history was sent whole well past summarize_after
// (and could outgrow the context window before it compacted). They now
// estimate the history as the hold does; English is sized as before.
func TestCompactionDenseHistory(t *testing.T) {
	const summarizeAfter = 4500
	for name, tc := range map[string]struct {
		unit    string
		summary bool
	}{
		// 8 messages of 600 characters: 14,400 bytes (3,600 at four bytes
		// a token), billed about 4,800.
		"CJK": {strings.Repeat("我每天早上开车去机场接客人。", 600/14+1)[:600*3], true},
		// As many bytes of English: about 3,600 tokens, under the threshold.
		"English": {strings.Repeat("I drive to the airport each day. ", 1800/33+1)[:1800], false},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, agent.Limits{})
			ag := h.agent
			ag.Compaction = &agent.Compaction{ShortenAfter: 10_000_000, SummarizeAfter: summarizeAfter, KeepTurns: 1}
			ctx := context.Background()
			sess := &coachd.Session{UserID: h.user.ID, Agent: ag.Name, Title: "long"}
			if err := h.store.CreateSession(ctx, sess); err != nil {
				t.Fatal(err)
			}
			var msgs []*coachd.Message
			for range 4 {
				msgs = append(msgs,
					&coachd.Message{Role: coachd.RoleUser, Content: tc.unit, Blocks: []coachd.Block{coachd.TextBlock(tc.unit)}},
					&coachd.Message{Role: coachd.RoleAssistant, Content: tc.unit, Blocks: []coachd.Block{coachd.TextBlock(tc.unit)}})
			}
			if err := h.store.AppendMessages(ctx, h.user.ID, sess.ID, msgs); err != nil {
				t.Fatal(err)
			}
			summaries := 0
			h.fake.SetScript(func(r *anthropictest.Request) anthropictest.Reply {
				if strings.HasPrefix(r.LastUserText(), "Summarize our conversation") {
					summaries++
					return anthropictest.Text("They drive to the airport every morning.", 8)
				}
				return anthropictest.Text("Noted.", 2)
			})
			res := h.turn(agent.TurnRequest{SessionID: sess.ID, Message: "and now?"}, &sink{})
			if res.StopReason != coachd.TurnEndTurn {
				t.Fatalf("stop %s %v", res.StopReason, res.Err)
			}
			billed := 8 * billedText(tc.unit)
			switch {
			case tc.summary && summaries == 0:
				t.Fatalf("a history billed about %d tokens was sent whole, past summarize_after %d", billed, summarizeAfter)
			case !tc.summary && summaries != 0:
				t.Fatalf("a history billed about %d tokens was summarized, under summarize_after %d", billed, summarizeAfter)
			}
		})
	}
}
