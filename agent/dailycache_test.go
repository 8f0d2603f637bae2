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

// dailyMonth plays 30 daily turns (a driver's photo of the day, text
// here) on one session against the fake; with tools, every turn saves a
// note first (two rounds). It returns the month's cache writes, reads
// and uncached input, and its requests.
func dailyMonth(t *testing.T, tools bool) (reqs []anthropictest.Request, write, read, input int64) {
	s := newSageSession(t)
	s.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		s.clock.Advance(3 * time.Second)
		if tools && len(req.ToolResults()) == 0 {
			return anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_%d", len(s.fake.Requests())), "save_note",
				`{"title":"day","content":"a good day on the road","note_type":"insight"}`))
		}
		return anthropictest.Text(strings.Repeat("That looks like a solid shift; the airport queue paid off again. ", 4), 40)
	})
	ctx := context.Background()
	for day := range 30 {
		tr, err := s.runner.Prepare(ctx, agent.TurnRequest{User: s.user, SessionID: s.id, Agent: "sage",
			Message: fmt.Sprintf("Day %d: finished at 9pm, 14 trips, $212. Here's my dashboard.", day)})
		if err != nil {
			t.Fatal(err)
		}
		res := tr.Run(ctx, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("day %d: %q %v", day, res.StopReason, res.Err)
		}
		s.id = res.SessionID
		s.clock.Advance(24 * time.Hour)
	}
	reqs = s.fake.Requests()
	for _, r := range reqs {
		write, read, input = write+r.Usage.CacheCreationInputTokens, read+r.Usage.CacheReadInputTokens, input+r.Usage.InputTokens
	}
	return reqs, write, read, input
}

// TestDailyChatWritesNoHistoryCache: a user who comes back the next day
// finds the prompt cache expired (5 minutes), and a turn that is one
// request (the coach just answers) reads nothing of the entry it writes
// either: its first request wrote the whole history to the cache, 1.25x
// every token, every day, never read. Such a turn (the user away longer
// than the cache lives, the session's previous turn one request too)
// now writes no history entry; a turn whose tools make a second round
// still does, and its second request reads it.
func TestDailyChatWritesNoHistoryCache(t *testing.T) {
	cost := func(w, r, in int64) float64 { return 1.25*float64(w) + 0.1*float64(r) + float64(in) }
	t.Run("Chat", func(t *testing.T) {
		reqs, w, r, in := dailyMonth(t, false)
		t.Logf("a month of daily one-request turns: cache write %d, read %d, input %d: %.0f input tokens' worth", w, r, in, cost(w, r, in))
		prefix := reqs[0].Usage.CacheCreationInputTokens // the tools and system prompt, and the first message
		for day, req := range reqs[1:] {
			if got := req.Usage.CacheCreationInputTokens; got > prefix {
				t.Fatalf("day %d wrote %d tokens to the cache, the prefix is %d: the history, which nothing reads", day+2, got, prefix)
			}
		}
	})
	t.Run("Tools", func(t *testing.T) {
		reqs, w, r, in := dailyMonth(t, true)
		t.Logf("a month of daily two-round turns: cache write %d, read %d, input %d: %.0f input tokens' worth", w, r, in, cost(w, r, in))
		for i := 1; i < len(reqs); i += 2 {
			first, second := reqs[i-1].Usage, reqs[i].Usage
			if second.CacheReadInputTokens < first.CacheReadInputTokens+first.CacheCreationInputTokens {
				t.Fatalf("day %d: the second round read %d cached tokens; the first wrote %d and read %d", i/2+1,
					second.CacheReadInputTokens, first.CacheCreationInputTokens, first.CacheReadInputTokens)
			}
		}
	})
}
