package agent_test

import (
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestSummaryWritesNoCache: the compaction's summary call sends the turns
// it summarizes once; nothing ever sends that prefix again (the next
// requests send the summary instead), so a cache entry written for it is
// paid (1.25x) and never read. What it may write is the stable prompt
// (tools and system) when no entry for it is live, which the turn's next
// request reads.
func TestSummaryWritesNoCache(t *testing.T) {
	for _, gap := range []time.Duration{time.Minute, 24 * time.Hour} {
		t.Run(gap.String(), func(t *testing.T) {
			s := newSageSessionIn(t, coachd.UnitTokens, func(a *agent.Agent) {
				a.Compaction = &agent.Compaction{SummarizeAfter: 2500, ShortenAfter: 10_000_000, KeepTurns: 2}
			})
			for i := range sageTurns {
				s.play(i)
				s.clock.Advance(gap)
				reqs := s.fake.Requests()
				for j, r := range reqs {
					if !strings.HasPrefix(r.LastUserText(), "Summarize our conversation") {
						continue
					}
					sum, next := r.Usage, reqs[j+1].Usage
					t.Logf("turn %d: summary usage %+v, the next request's %+v", i, sum, next)
					if sum.CacheCreationInputTokens > 0 && next.CacheReadInputTokens < sum.CacheReadInputTokens+sum.CacheCreationInputTokens {
						t.Fatalf("the summary call wrote %d tokens to the prompt cache that the next request does not read",
							sum.CacheCreationInputTokens)
					}
					return
				}
			}
			t.Fatal("no summary call: the test does not reach summarize_after")
		})
	}
}
