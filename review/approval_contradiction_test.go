package review

import (
	"strings"
	"testing"
)

// TestApprovalContradictsItself: seed 003 gives feedback when any test is
// failing or missing, and the coach never skips independent
// verification. An approval whose own tests_verified lists failures or
// missing tests, or whose contracts_honored says it did not verify
// independently, was checked only for tests_verified.failed and was
// recorded.
func TestApprovalContradictsItself(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	head := `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds.","requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"TestAdd passes"}]`
	for input, want := range map[string]string{
		head + `,"tests_verified":{"total":2,"passed":2,"failed":0,"failures":["TestAddNegative panics"]}}`:     "tests_verified.failures",
		head + `,"tests_verified":{"total":1,"passed":1,"failed":0,"missing":["TestAddOverflow"]}}`:             "tests_verified.missing",
		head + `,"contracts_honored":{"validate_implementation_called":true,"independent_verification":false}}`: "independent_verification",
	} {
		// A review whose test run passed: only the decision is wrong.
		tools, tr := reviewTools(t, goModule(t, true), "go test ./...")
		call(t, tools, ValidateTool, validateInput)
		if res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`); res.IsError || !strings.Contains(res.Content, `"passed":1`) {
			t.Fatalf("run: %+v", res)
		}
		if res := call(t, tools, DecisionTool, input); !res.IsError || !strings.Contains(res.Content, want) || !strings.Contains(res.Content, "give feedback instead") {
			t.Errorf("%s: %+v, want refused naming %s", input, res, want)
		}
		if d, _ := tr.Decision(); d != nil {
			t.Errorf("recorded: %s", d)
		}
	}
}
