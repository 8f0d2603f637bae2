package review

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestRecordDecisionRequirementsStatus: seed 003's record_decision takes
// the requirements checked as requirements_status, and logs them in
// coach_feedback's requirements_status. A decision naming them so had
// them dropped: the feedback's trace said [], an approval covering every
// requirement there was refused as covering none, and nothing checked
// them (met without evidence).
func TestRecordDecisionRequirementsStatus(t *testing.T) {
	passing := func(t *testing.T) (map[string]coachd.Tool, *Trace) {
		if testing.Short() {
			t.Skip("runs go test")
		}
		tools, tr := reviewTools(t, goModule(t, true), "go test ./...")
		call(t, tools, ValidateTool, validateInput)
		if res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`); res.IsError || !strings.Contains(res.Content, `"passed":1`) {
			t.Fatalf("run: %+v", res)
		}
		return tools, tr
	}
	t.Run("Feedback", func(t *testing.T) {
		tools, tr := passing(t)
		in := `{"task_id":"TASK-001","decision":"feedback","rationale":"Add subtracts.",` +
			`"requirements_status":[{"requirement":"Add adds","status":"not_met","issue":"Add returns a - b"}],` +
			`"feedback_items":[{"severity":"high","file":"add.go","line":3,"issue":"Add returns a - b instead of a + b"}]}`
		if res := call(t, tools, DecisionTool, in); res.IsError {
			t.Fatalf("feedback: %s", res.Content)
		}
		var got struct {
			Events []struct {
				Type string
				Data struct {
					Status []map[string]string `json:"requirements_status"`
				}
			}
		}
		b, _ := json.Marshal(tr)
		json.Unmarshal(b, &got)
		var status []map[string]string
		for _, ev := range got.Events {
			if ev.Type == "coach_feedback" {
				status = ev.Data.Status
			}
		}
		if len(status) != 1 || status[0]["requirement"] != "Add adds" || status[0]["status"] != "not_met" {
			t.Errorf("coach_feedback's requirements_status %v, want the decision's", status)
		}
	})
	t.Run("Approve", func(t *testing.T) {
		tools, tr := passing(t)
		in := `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; TestAdd passes.",` +
			`"requirements_status":[{"requirement":"Add adds","status":"met","evidence":"TestAdd passes"}]}`
		if res := call(t, tools, DecisionTool, in); res.IsError {
			t.Fatalf("approval covering every requirement in requirements_status refused: %s", res.Content)
		}
		if _, approved := tr.Decision(); !approved {
			t.Error("not approved")
		}
	})
	t.Run("ErrNoEvidence", func(t *testing.T) {
		tools, _ := passing(t)
		in := `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds.",` +
			`"requirements_status":[{"requirement":"Add adds","status":"met"}]}`
		if res := call(t, tools, DecisionTool, in); !res.IsError || !strings.Contains(res.Content, "requirements_status[0].evidence") {
			t.Errorf("met without evidence: %s", res.Content)
		}
	})
}
