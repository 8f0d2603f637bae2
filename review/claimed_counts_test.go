package review

import (
	"strings"
	"testing"
)

// TestApprovalClaimingMoreTestsThanRan: the coach's own run of the suite
// passed one test, and its approval claims 40 passed. The seed's coach
// verifies independently, so counts its runs do not show are refused,
// with the counts the runs did show.
func TestApprovalClaimingMoreTestsThanRan(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	tools, _ := reviewTools(t, goModule(t, true), "go test -v ./...")
	if res := call(t, tools, ValidateTool, validateInput); res.IsError {
		t.Fatalf("validate: %+v", res)
	}
	if res := call(t, tools, RunCommandTool, `{"command":"go test -v ./..."}`); !strings.Contains(res.Content, `"exit_code":0`) {
		t.Fatalf("run: %+v", res)
	}
	inflated := strings.Replace(approveInput, `"total":1,"passed":1`, `"total":40,"passed":40`, 1)
	res := call(t, tools, DecisionTool, inflated)
	if !res.IsError || !strings.Contains(res.Content, "1 passed") {
		t.Fatalf("approval claiming 40 passed after a run of 1 was not refused: %+v", res)
	}
	if res := call(t, tools, DecisionTool, approveInput); res.IsError {
		t.Fatalf("approval with the run's own counts refused: %+v", res)
	}
}
