package agent_test

import (
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestWhenRulesFoldedCaptures: a capture folded into a daily log is
// processed, yet has_file: [capture] held for it for ever, so Sage's
// capture-review ("process the quick captures that piled up") loaded every
// evening for a user with nothing waiting; the fold (a save) also made it
// a file of today.
func TestWhenRulesFoldedCaptures(t *testing.T) {
	evening := time.Date(2026, 3, 2, 19, 0, 0, 0, time.UTC)
	folded := []*coachd.File{{Type: "capture", Name: "c1", UpdatedAt: evening, Attributes: coachd.FileAttributes{Folded: true}}}
	waiting := []*coachd.File{{Type: "capture", Name: "c2", UpdatedAt: evening.Add(-48 * time.Hour)}}
	for _, tc := range []struct {
		name  string
		rule  agent.Rule
		files []*coachd.File
		want  bool
	}{
		{"HasFolded", agent.Rule{HasFile: []string{"capture"}}, folded, false},
		{"HasWaiting", agent.Rule{HasFile: []string{"capture"}}, append(folded, waiting...), true},
		{"TodayFolded", agent.Rule{FileToday: []string{"capture"}}, folded, false},
		{"MissingFolded", agent.Rule{MissingFile: []string{"capture"}}, folded, true},
		// A folded capture's status is no status to act on (README: a
		// folded capture counts for none of the conditions): a crisis
		// skill held on every turn for a capture long processed.
		{"StatusFolded", agent.Rule{FileStatus: []string{"in_crisis"}}, []*coachd.File{{Type: "capture", Name: "c3", UpdatedAt: evening,
			Attributes: coachd.FileAttributes{Folded: true, Status: "in_crisis"}}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rule.Match(&agent.Facts{Files: tc.files, Now: evening}); got != tc.want {
				t.Fatalf("Match = %v, want %v", got, tc.want)
			}
		})
	}
}
