package review

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestApprovalCountsFromARun: an approval's tests_verified must be what
// one of the review's test runs showed. They were only compared with the
// last run, and only when higher: counts no run showed (2 of a suite of
// 3, after a run of one test and one of all three) were recorded, and an
// earlier run's counts (the whole suite's, before a narrower run) were
// refused.
func TestApprovalCountsFromARun(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := goModule(t, true)
	write(t, filepath.Join(dir, "more_test.go"), "package m\n\nimport \"testing\"\n\n"+
		"func TestAddZero(t *testing.T) {\n\tif Add(2, 0) != 2 {\n\t\tt.Fatal(\"Add(2, 0) != 2\")\n\t}\n}\n\n"+
		"func TestAddNeg(t *testing.T) {\n\tif Add(2, -3) != -1 {\n\t\tt.Fatal(\"Add(2, -3) != -1\")\n\t}\n}\n")
	const all, one = "go test ./...", "go test -run ^TestAdd$ ./..."
	claim := func(total, passed string) string {
		return strings.Replace(approveInput, `"total":1,"passed":1`, `"total":`+total+`,"passed":`+passed, 1)
	}
	review := func(commands ...string) map[string]coachd.Tool {
		tools, _ := reviewTools(t, dir, all, one)
		if res := call(t, tools, ValidateTool, validateInput); res.IsError {
			t.Fatalf("validate: %+v", res)
		}
		for _, c := range commands {
			if res := call(t, tools, RunCommandTool, `{"command":"`+c+`"}`); !strings.Contains(res.Content, `"exit_code":0`) {
				t.Fatalf("%s: %+v", c, res)
			}
		}
		return tools
	}
	t.Run("ErrNoRunShowedThem", func(t *testing.T) {
		tools := review(one, all)
		res := call(t, tools, DecisionTool, claim("2", "2"))
		if !res.IsError || !strings.Contains(res.Content, "3 passed") || !strings.Contains(res.Content, "1 passed") {
			t.Fatalf("approval claiming 2 passed, after runs of 1 and 3, not refused with the runs' counts: %+v", res)
		}
		if res := call(t, tools, DecisionTool, claim("3", "3")); res.IsError {
			t.Fatalf("approval with the whole suite's counts refused: %+v", res)
		}
	})
	t.Run("OKEarlierRun", func(t *testing.T) {
		tools := review(all, one)
		if res := call(t, tools, DecisionTool, claim("3", "3")); res.IsError {
			t.Fatalf("approval with the whole suite's counts, run before a narrower run, refused: %+v", res)
		}
	})
}
