package review_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
)

// TestAutobuildCoachFails: when the coach's review fails (the model
// unreachable), the loop stops with that error; it does not hand the
// player "the coach could not record a decision" and spend the next
// turns, and their tokens, on an outage.
func TestAutobuildCoachFails(t *testing.T) {
	e := newEnv(t)
	p := player(99)
	var playerCalls atomic.Int32
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if isPlayer(req) {
			playerCalls.Add(1)
			return p(req)
		}
		return anthropictest.Status(529, nil, "")
	})
	b := &review.Build{Reviewer: e.rv, MaxTurns: 3}
	res, err := b.Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), scratchBase(t))
	if coachd.ErrorCode(err) != coachd.EUPSTREAMBUSY {
		t.Fatalf("err %v, want the coach's upstream error", err)
	}
	if res == nil || res.Turns != 1 || playerCalls.Load() != 2 {
		t.Fatalf("build %+v after %d player calls, want 1 turn of 2 calls", res, playerCalls.Load())
	}
}
