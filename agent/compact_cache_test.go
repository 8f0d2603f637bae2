package agent_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestShortenKeepsCache: once a session is past shorten_after, older large
// tool results are sent shortened. Each turn that moves the shortening cut
// rewrites the prompt cache from the cut on, so the cut moves keep_turns
// turns at a time: of any keep_turns turns in a row, at most one re-caches
// the history the turn before it cached.
func TestShortenKeepsCache(t *testing.T) {
	const keep = 3
	s := newSageSessionIn(t, coachd.UnitTokens, func(a *agent.Agent) {
		a.Compaction = &agent.Compaction{ShortenAfter: 1500, SummarizeAfter: 10_000_000, KeepTurns: keep, ShortenOver: 500}
	})
	log := strings.Repeat("Notes on the day, one line after another, nothing to shorten by hand. ", 40)
	s.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		s.clock.Advance(3 * time.Second)
		s.mu.Lock()
		i, r := s.turn, s.round
		s.round++
		s.mu.Unlock()
		switch {
		case r > 0:
			return anthropictest.Text(fmt.Sprintf("Thanks, noted (%d).", i), 40)
		case i == 0:
			return anthropictest.Reply{Blocks: []anthropictest.BlockSpec{anthropictest.ToolUse("toolu_save", "save_file",
				fmt.Sprintf(`{"file_type":"daily-log","file_name":"2026-03-02","content":%q}`, log))}}
		}
		return anthropictest.Reply{Blocks: []anthropictest.BlockSpec{anthropictest.ToolUse(fmt.Sprintf("toolu_read_%02d", i), "read_file",
			`{"file_type":"daily-log","file_name":"2026-03-02"}`)}}
	})
	const turns = 14
	var firsts, lasts []int // each turn's first and last request
	for i := range turns {
		firsts = append(firsts, len(s.fake.Requests()))
		s.play(i)
		lasts = append(lasts, len(s.fake.Requests())-1)
		s.clock.Advance(20 * time.Second)
	}
	reqs := s.fake.Requests()
	shortened := false
	var recached []int
	for i := 1; i < turns; i++ {
		prev, next := reqs[lasts[i-1]].Usage, reqs[firsts[i]].Usage
		shortened = shortened || strings.Contains(string(reqs[firsts[i]].Raw), "shortened for this request")
		if next.CacheReadInputTokens < prev.CacheReadInputTokens+prev.CacheCreationInputTokens {
			recached = append(recached, i)
		}
	}
	if !shortened {
		t.Fatal("no request sent a shortened tool result: the test does not reach shorten_after")
	}
	t.Logf("turns that re-cached the history: %v", recached)
	for j := 1; j < len(recached); j++ {
		if recached[j]-recached[j-1] < keep {
			t.Errorf("turns %d and %d both re-cached the history: the shortening cut moves every turn, want every %d turns",
				recached[j-1], recached[j], keep)
		}
	}
}
