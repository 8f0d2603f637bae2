package review_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
)

// TestReviewBriefAtItsBounds: POST /v1/reviews takes 100 requirements of
// 2,000 characters and a 64 KiB player report, but the coach's brief
// built from them went through the chat's 32,000-character message limit:
// a review of 17 long requirements, or of a long report, failed with
// "message must be at most 32000 characters", a field the client never
// sent; so did autobuild once the coach's feedback (up to 256 KiB)
// outgrew it.
func TestReviewBriefAtItsBounds(t *testing.T) {
	e := newEnv(t)
	reqs := make([]string, 100)
	for i := range reqs {
		reqs[i] = strings.Repeat("r", 2000)
	}
	report, _ := json.Marshal(map[string]string{"implementation_notes": strings.Repeat("n", 64<<10-100)})
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("No decision.", 5) })
	run, err := e.rv.Prepare(context.Background(), review.Request{User: e.user, TaskID: "TASK-001", Requirements: reqs,
		PlayerReport: report, Dir: sample(t, false)})
	if err != nil {
		t.Fatalf("a review within the API's bounds: %v", err)
	}
	// The model got the brief (the script's coach records nothing: the
	// review ends without a decision, which is stored).
	if rev, _, err := run.Do(context.Background(), nopSink{}); err != nil || rev.ID == "" {
		t.Fatalf("review: %+v %v", rev, err)
	}
}
