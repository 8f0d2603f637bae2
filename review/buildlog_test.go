package review_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd/review"
)

// TestAutobuildLogNamesCoach: with the pack's default coach (no --agent),
// autobuild's log read "turn 1:  reviews", naming no one.
func TestAutobuildLogNamesCoach(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(build(e, 0))
	var log bytes.Buffer
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1, Log: &log}
	if _, err := b.Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), scratchBase(t)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "turn 1: autobuild-coach reviews") {
		t.Errorf("log:\n%s", log.String())
	}
}
