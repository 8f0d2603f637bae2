package review_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReviewApprovalMissingRequirements: the review has three
// requirements; the coach validates with one, runs the passing tests and
// approves with requirements_verified naming only that one (the seed:
// "approve without checking all requirements" is a must_not, "APPROVE only
// if ALL requirements met"). The approval was recorded.
func TestReviewApprovalMissingRequirements(t *testing.T) {
	e := newEnv(t)
	partial := `{"task_id":"TASK-001","decision":"approve","rationale":"Slugify lowercases; go test passes.",` +
		`"requirements_verified":[{"requirement":"Slugify lowercases","status":"met","evidence":"TestSlugify passes"}],` +
		`"tests_verified":{"total":1,"passed":1,"failed":0}}`
	var refusal string
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		switch s := step(req); {
		case s < 2:
			return coach(req)
		case s == 2:
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_d", "record_decision", partial))
		default:
			if r := lastResult(req); r.IsError && refusal == "" {
				refusal = r.ResultText()
			}
			return anthropictest.Text("I could not record an approval.", 10)
		}
	})
	rev, _ := e.review(t, sample(t, true))
	if rev.Approved || rev.Decision != nil {
		t.Fatalf("approval of 1 of 3 requirements recorded: %s", rev.Decision)
	}
	for _, want := range []string{"runs of non-alphanumerics become one hyphen", "no leading or trailing hyphen"} {
		if !strings.Contains(refusal, want) {
			t.Errorf("the refusal does not name the missing %q: %s", want, refusal)
		}
	}
}
