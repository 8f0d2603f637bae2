package server_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReviewUpstreamError: a review whose model call fails before the
// coach did anything answers with the upstream error (503
// rate_limit, like POST /v1/chat), not a 200 review without a decision
// that a client reads as "not approved" and sends back to its player.
func TestReviewUpstreamError(t *testing.T) {
	e, _ := reviewEnv(t)
	e.fake.Enqueue(anthropictest.Status(529, nil, ""))
	r := e.post(e.alice.key, "/v1/reviews", fmt.Sprintf(reviewBody, "sample"), nil, nil)
	if r.status != 503 || r.errorCode() != coachd.EUPSTREAMBUSY {
		t.Fatalf("upstream busy: %d %s", r.status, r.body)
	}
	// Nothing stays held for the failed review.
	if st, err := e.db.BudgetStatus(context.Background(), e.alice.ID); err != nil || st.TokensReserved != 0 {
		t.Fatalf("after the failed review: %+v %v", st, err)
	}
}
