package review

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// reviewTools are a review's tools over dir, by name.
func reviewTools(t *testing.T, dir string, commands ...string) (map[string]coachd.Tool, *Trace) {
	t.Helper()
	tr := NewTrace("TASK-001")
	ws, err := NewWorkspace(dir, Options{Commands: commands, Trace: tr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() }) // the review's bytecode
	m := map[string]coachd.Tool{}
	for _, tool := range append(ws.Tools(), DecisionTools(tr)...) {
		m[tool.Definition().Name] = tool
	}
	return m, tr
}

func call(t *testing.T, tools map[string]coachd.Tool, name, input string) coachd.ToolResult {
	t.Helper()
	res, err := tools[name].Execute(context.Background(), coachd.ToolCall{ID: "toolu_x", Name: name, Input: json.RawMessage(input)}, coachd.ToolEnv{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

const (
	validateInput = `{"task_id":"TASK-001","requirements":["Add adds"],"player_report":{"files_modified":["add.go"],"tests_written":["TestAdd"],"implementation_notes":"done","concerns":["none"]}}`
	approveInput  = `{"task_id":"TASK-001","decision":"approve","rationale":"Add adds; TestAdd passes.","requirements_verified":[{"requirement":"Add adds","status":"met","evidence":"TestAdd passes"}],"tests_verified":{"total":1,"passed":1,"failed":0}}`
	feedbackInput = `{"task_id":"TASK-001","decision":"feedback","rationale":"Add subtracts.","feedback_items":[{"severity":"high","file":"add.go","line":3,"issue":"Add returns a - b instead of a + b","suggestion":"return a + b"}]}`
)

func TestDecisionOrder(t *testing.T) {
	tools, tr := reviewTools(t, goModule(t, true), "go test ./...")
	if res := call(t, tools, DecisionTool, feedbackInput); !res.IsError || !strings.Contains(res.Content, "call validate_implementation first") {
		t.Fatalf("decision before validation: %+v", res)
	}
	if res := call(t, tools, ValidateTool, strings.Replace(validateInput, "TASK-001", "TASK-999", 1)); !res.IsError || !strings.Contains(res.Content, "TASK-001") {
		t.Fatalf("other task: %+v", res)
	}
	res := call(t, tools, ValidateTool, validateInput)
	var ctx map[string]any
	if res.IsError || json.Unmarshal([]byte(res.Content), &ctx) != nil || ctx["files_to_review"].([]any)[0] != "add.go" ||
		ctx["tests_to_run"].([]any)[0] != "TestAdd" || ctx["player_notes"] != "done" || ctx["player_concerns"].([]any)[0] != "none" {
		t.Fatalf("validate_implementation: %+v", res)
	}
	if d, _ := tr.Decision(); d != nil {
		t.Fatal("a decision before record_decision")
	}
}

func TestDecisionApproveNeedsPassingTests(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	t.Run("NotRun", func(t *testing.T) {
		tools, tr := reviewTools(t, goModule(t, true), "go test ./...")
		call(t, tools, ValidateTool, validateInput)
		if res := call(t, tools, DecisionTool, approveInput); !res.IsError || !strings.Contains(res.Content, "has not run the tests") {
			t.Fatalf("approve without tests: %+v", res)
		}
		if d, ok := tr.Decision(); d != nil || ok {
			t.Fatal("approval recorded")
		}
	})
	t.Run("Failing", func(t *testing.T) {
		tools, tr := reviewTools(t, goModule(t, false), "go test ./...")
		call(t, tools, ValidateTool, validateInput)
		call(t, tools, RunCommandTool, `{"command":"go test ./..."}`)
		if res := call(t, tools, DecisionTool, approveInput); !res.IsError || !strings.Contains(res.Content, "did not pass") {
			t.Fatalf("approve over failing tests: %+v", res)
		}
		res := call(t, tools, DecisionTool, feedbackInput)
		if res.IsError || !strings.Contains(res.Content, `"is_approved":false`) || !strings.Contains(res.Content, `"line":3`) {
			t.Fatalf("feedback: %+v", res)
		}
		if d, ok := tr.Decision(); ok || !strings.Contains(string(d), "a - b") {
			t.Fatalf("decision %s approved=%v", d, ok)
		}
		trace, _ := json.Marshal(tr)
		for _, want := range []string{`"type":"coach_validate_start"`, `"type":"coach_decision"`, `"type":"coach_feedback"`, `"tool":"run_command"`, `"exit_code":1`} {
			if !strings.Contains(string(trace), want) {
				t.Errorf("trace lacks %s: %s", want, trace)
			}
		}
		if res := call(t, tools, DecisionTool, feedbackInput); !res.IsError || !strings.Contains(res.Content, "already recorded") {
			t.Fatalf("second decision: %+v", res)
		}
	})
	t.Run("Passing", func(t *testing.T) {
		tools, tr := reviewTools(t, goModule(t, true), "go test ./...")
		call(t, tools, ValidateTool, validateInput)
		call(t, tools, RunCommandTool, `{"command":"go test ./..."}`)
		res := call(t, tools, DecisionTool, approveInput)
		if res.IsError || !strings.Contains(res.Content, `"is_approved":true`) {
			t.Fatalf("approve after passing tests: %+v", res)
		}
		if _, ok := tr.Decision(); !ok {
			t.Fatal("not approved")
		}
	})
}

func TestDecisionChecks(t *testing.T) {
	tools, _ := reviewTools(t, t.TempDir())
	call(t, tools, ValidateTool, validateInput)
	for input, want := range map[string]string{
		`{"task_id":"TASK-001","decision":"feedback","rationale":"r"}`:                                                                                        "at least one specific item",
		`{"task_id":"TASK-001","decision":"feedback","rationale":"r","requirements_verified":[{"requirement":"x","status":"met"}],"feedback_items":[{}]}`:     "requirements_verified[0].evidence is required",
		`{"task_id":"TASK-001","decision":"feedback","rationale":"r","requirements_verified":[{"requirement":"x","status":"not_met"}],"feedback_items":[{}]}`: "requirements_verified[0].issue is required",
		`{"task_id":"TASK-002","decision":"feedback","rationale":"r"}`:                                                                                        `task_id must be "TASK-001"`,
		`{"task_id":"TASK-001","decision":"approve","rationale":"r","requirements_verified":[{"requirement":"x","status":"partial","issue":"half"}]}`:         "give feedback instead",
	} {
		if res := call(t, tools, DecisionTool, input); !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: %+v, want %q", input, res, want)
		}
	}
}

// The schema half of the checks runs in the runner, before the tool: the
// messages name the field.
func TestDecisionSchema(t *testing.T) {
	ts, err := agent.NewToolset(DecisionTools(NewTrace("TASK-001"))...)
	if err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]string{
		`{"task_id":"TASK-001","decision":"maybe","rationale":"r"}`:                                                           "decision",
		`{"task_id":"TASK-001","decision":"feedback","rationale":"r","feedback_items":[{"file":"a.go","issue":"too short"}]}`: "feedback_items.0.issue",
		`{"task_id":"TASK-001","decision":"feedback","rationale":"r","feedback_items":[{"issue":"no file given for this"}]}`:  "feedback_items.0",
		`{"task_id":"TASK-001","decision":"approve"}`:                                                                         "rationale",
		`{"task_id":"TASK-001","decision":"approve","rationale":"r","tests_verified":{"total":1}}`:                            "tests_verified",
	} {
		err := ts.ValidateInput(DecisionTool, json.RawMessage(input))
		if err == nil || !strings.Contains(agent.InvalidInputText(DecisionTool, err), want) {
			t.Errorf("%s: %v, want a message naming %s", input, err, want)
		}
	}
	if err := ts.ValidateInput(DecisionTool, json.RawMessage(feedbackInput)); err != nil {
		t.Errorf("the seed's feedback shape refused: %v", err)
	}
}

// wantRefused asserts that approving now is refused because a test run
// did not pass; msg says what an acceptance would mean.
func wantRefused(t *testing.T, tools map[string]coachd.Tool, msg string) {
	t.Helper()
	if res := call(t, tools, DecisionTool, approveInput); !res.IsError || !strings.Contains(res.Content, "did not pass") {
		t.Fatalf("%s: %s", msg, res.Content)
	}
}
