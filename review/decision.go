package review

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// The seed's tool names.
const (
	ValidateTool = "validate_implementation"
	DecisionTool = agent.DecisionTool // record_decision
)

// DecisionSchema is the seed's decision, the input of record_decision and,
// for a coach whose must_output is prose, the shape of its final reply.
const DecisionSchema = `{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "minLength": 1, "maxLength": 100},
    "decision": {"type": "string", "enum": ["approve", "feedback"]},
    "rationale": {"type": "string", "minLength": 1, "maxLength": 4000},
    "requirements_verified": ` + requirementsSchema + `,
    "requirements_status": ` + requirementsSchema + `,
    "tests_verified": {
      "type": "object",
      "properties": {
        "total": {"type": "integer", "minimum": 0},
        "passed": {"type": "integer", "minimum": 0},
        "failed": {"type": "integer", "minimum": 0},
        "failures": {"type": "array", "items": {"type": "string"}},
        "missing": {"type": "array", "items": {"type": "string"}}
      },
      "required": ["total", "passed", "failed"]
    },
    "feedback_items": {"type": "array", "maxItems": 50, "items": {
      "type": "object",
      "properties": {
        "severity": {"type": "string", "enum": ["high", "medium", "low"]},
        "file": {"type": "string", "minLength": 1, "maxLength": 1000},
        "line": {"type": "integer", "minimum": 1},
        "issue": {"type": "string", "minLength": 11, "maxLength": 2000},
        "suggestion": {"type": "string", "minLength": 1, "maxLength": 2000}
      },
      "required": ["file", "issue"]
    }},
    "test_config_reviewed": {"type": "array", "maxItems": 100, "items": {
      "type": "object",
      "properties": {
        "file": {"type": "string", "minLength": 1, "maxLength": 1000},
        "note": {"type": "string", "minLength": 1, "maxLength": 2000}
      },
      "required": ["file", "note"]
    }},
    "contracts_honored": {"type": "object", "properties": {
      "validate_implementation_called": {"type": "boolean"},
      "record_decision_called": {"type": "boolean"},
      "independent_verification": {"type": "boolean"}
    }}
  },
  "required": ["task_id", "decision", "rationale"]
}`

// requirementsSchema is the requirements checked: requirements_verified
// (the seed's output) or requirements_status (its record_decision's
// parameter), one entry each.
const requirementsSchema = `{"type": "array", "maxItems": 100, "items": {
      "type": "object",
      "properties": {
        "requirement": {"type": "string", "minLength": 1, "maxLength": 2000},
        "status": {"type": "string", "enum": ["met", "not_met", "partial"]},
        "evidence": {"type": "string", "minLength": 1, "maxLength": 2000},
        "issue": {"type": "string", "minLength": 1, "maxLength": 2000}
      },
      "required": ["requirement", "status"]
    }}`

// Decision is the part of DecisionSchema the checks below read.
type Decision struct {
	TaskID       string              `json:"task_id"`
	Decision     string              `json:"decision"`
	Rationale    string              `json:"rationale"`
	Requirements []RequirementStatus `json:"requirements_verified"`
	// Status is the same list under record_decision's seed parameter name.
	Status []RequirementStatus `json:"requirements_status"`
	Tests  *struct {
		Total, Passed, Failed int
		Failures, Missing     []string
	} `json:"tests_verified"`
	FeedbackItems []json.RawMessage `json:"feedback_items"`
	// ConfigReviewed names the test harness files of the change the
	// coach read (unreviewedHarness).
	ConfigReviewed []ConfigReviewed `json:"test_config_reviewed"`
	Contracts      *struct {
		Independent *bool `json:"independent_verification"`
	} `json:"contracts_honored"`
}

// RequirementStatus is one requirement checked.
type RequirementStatus struct {
	Requirement string `json:"requirement"`
	Status      string `json:"status"`
	Evidence    string `json:"evidence"`
	Issue       string `json:"issue"`
}

// DecisionTools are validate_implementation and record_decision over the
// review's trace.
func DecisionTools(tr *Trace) []coachd.Tool {
	return []coachd.Tool{validateTool{tr}, decisionTool{tr}}
}

type validateTool struct{ tr *Trace }

func (validateTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name: ValidateTool,
		Description: "Start the validation of a task: call it first, with the task id, the original requirements and the player's report. " +
			"It returns the context to verify (files to review, tests to run, the player's notes and concerns) and starts the review's trace.",
		Category: coachd.ToolLifecycle,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {
    "task_id": {"type": "string", "minLength": 1, "maxLength": 100},
    "requirements": {"type": "array", "minItems": 1, "maxItems": 100, "items": {"type": "string", "minLength": 1, "maxLength": 2000}},
    "player_report": {"type": "object"}
  },
  "required": ["task_id", "requirements"]
}`),
	}
}

func (t validateTool) Execute(_ context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct {
		TaskID       string   `json:"task_id"`
		Requirements []string `json:"requirements"`
		Report       struct {
			Files    []string `json:"files_modified"`
			Tests    []string `json:"tests_written"`
			Notes    string   `json:"implementation_notes"`
			Concerns []string `json:"concerns"`
		} `json:"player_report"`
	}
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: %v (player_report fields: files_modified and tests_written are lists of strings)", err)
	}
	if in.TaskID != t.tr.TaskID() {
		return refuse("this review is for task %s, not %s: call validate_implementation with task_id %q", t.tr.TaskID(), in.TaskID, t.tr.TaskID())
	}
	t.tr.mu.Lock()
	t.tr.validated = true
	t.tr.playerFiles = in.Report.Files
	if len(t.tr.requirements) == 0 {
		t.tr.requirements = in.Requirements
	}
	t.tr.mu.Unlock()
	nonNil := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		return s
	}
	t.tr.event("coach_validate_start", map[string]any{
		"requirements_count": len(in.Requirements), "player_files": nonNil(in.Report.Files),
		"player_tests": nonNil(in.Report.Tests), "timestamp": t.tr.now().Unix(),
	})
	return jsonResult(map[string]any{
		"task_id": in.TaskID, "requirements": in.Requirements,
		"files_to_review": nonNil(in.Report.Files), "tests_to_run": nonNil(in.Report.Tests),
		"player_notes": in.Report.Notes, "player_concerns": nonNil(in.Report.Concerns),
	})
}

type decisionTool struct{ tr *Trace }

func (decisionTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name: DecisionTool,
		Description: "Record your decision, last: approve only when every requirement is met and the tests you ran with run_command passed; " +
			"otherwise feedback, with one feedback item per issue (file, line when known, a specific issue, a suggestion, a severity). " +
			"An approval of a change that touches a test harness file (conftest.py, pytest.ini, pyproject.toml, setup.cfg, tox.ini, package.json, jest.config.*, .npmrc, .yarnrc.yml) " +
			"names each in test_config_reviewed, with what you checked: such a file decides what a test run reports.",
		Category:    coachd.ToolLifecycle,
		InputSchema: json.RawMessage(DecisionSchema),
	}
}

func (t decisionTool) Execute(ctx context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var d Decision
	if err := json.Unmarshal(call.Input, &d); err != nil {
		return refuse("invalid input: %v", err)
	}
	tr := t.tr
	tr.mu.Lock()
	validated, recorded, reqs, running, unknown := tr.validated, tr.decision != nil, tr.requirements, tr.running, tr.buildUnknown
	tr.mu.Unlock()
	switch {
	case !validated:
		return refuse("record_decision refused: call validate_implementation first (task_id, requirements, player_report), then verify, then decide")
	case recorded:
		return refuse("record_decision refused: this review's decision is already recorded")
	case d.TaskID != tr.TaskID():
		return refuse("record_decision refused: task_id must be %q", tr.TaskID())
	}
	if problems := d.check(); len(problems) > 0 {
		return refuse("record_decision refused: %s", strings.Join(problems, "; "))
	}
	approve := d.Decision == "approve"
	if approve {
		run, failed := tr.lastTestRun(), tr.failedTestRun()
		switch {
		case running > 0:
			// One the turn left behind at its timeout, being stopped: it
			// did not finish, and is a failed run once in the trace.
			return refuse("approval refused: a test run of this review has not ended (the model was told it did not finish): it did not pass, and the code has not changed since: record feedback instead")
		case failed != nil:
			return refuse("approval refused: a test run of this review (%s) did not pass (%s), and the code has not changed since: record feedback instead", failed.Command, failed.fault())
		case run == nil:
			return refuse("approval refused: this review has not run the tests. Run them yourself with run_command, then decide")
		case !run.Passed():
			return refuse("approval refused: the last test run (%s) did not pass (%s): record feedback instead", run.Command, run.fault())
		case unknown != "":
			return refuse("approval refused: what the player changed could not be compared with the workspace as the build began (%s), "+
				"so what the tests ran is not known to be the change: record feedback instead", unknown)
		}
		changed, tracked, unlisted := tr.changedPaths(ctx)
		if unlisted != "" {
			return refuse("approval refused: what the change touches could not be listed (%s), "+
				"so whether it changes what decides a test run's result (a conftest.py, a jest config) is not known: record feedback instead", unlisted)
		}
		if missing := tr.untestedPackages(changed); len(missing) > 0 {
			more := ""
			if len(missing) > 10 {
				missing, more = missing[:10], fmt.Sprintf(" and %d more", len(missing)-10)
			}
			return refuse("approval refused: the change under review touches the Go packages %s%s, and no passing test run of this review ran their tests "+
				"(the player's files_modified, in a build what it was seen to change, and, in a git workspace, what git shows changed): run the tests that cover them (go test ./... runs them all), then decide", strings.Join(missing, ", "), more)
		}
		if missing := tr.untestedSuites(changed); len(missing) > 0 {
			return refuse("approval refused: the change under review touches %s, and no passing test run of this review ran all of them "+
				"(the player's files_modified, in a build what it was seen to change, and, in a git workspace, what git shows changed; a run of some of the tests, by file, name or pattern, does not say the others pass): run them, then decide", strings.Join(missing, "; "))
		}
		// Installed code is the change's where autobuild saw the player
		// change it, or git, which tracks it, shows it changed.
		tr.mu.Lock()
		seen := slices.Concat(tr.buildFiles, tracked)
		tr.mu.Unlock()
		if missing := unreviewedHarness(changed, seen, slices.Concat(tr.jestNamed(changed), tr.pyShadowed(changed)), d.ConfigReviewed); len(missing) > 0 {
			return refuse("%s", harnessRefusal(missing))
		}
		// The counts an approval claims must be ones a passing run of the
		// coach's own showed, not the player's (or the model's) say-so.
		if c := d.Tests; c != nil {
			runs := tr.testRuns()
			shown := func(r *CommandRun) bool {
				got := r.Tests
				return r.Passed() && c.Passed == got.Passed && c.Total >= got.Passed && c.Total <= got.Passed+got.Failed+got.Skipped
			}
			if !slices.ContainsFunc(runs, shown) {
				return refuse("approval refused: tests_verified (total %d, passed %d) is not what a test run of this review showed; %s. "+
					"Report the counts of one run you verified with, as it showed them (passed; total is passed plus skipped)", c.Total, c.Passed, shownCounts(runs))
			}
		}
		var verified []string
		for _, r := range slices.Concat(d.Requirements, d.Status) {
			verified = append(verified, r.Requirement)
		}
		if missing := uncovered(reqs, verified); len(missing) > 0 {
			more := ""
			if len(missing) > 10 {
				missing, more = missing[:10], fmt.Sprintf(" and %d more", len(missing)-10)
			}
			for i, m := range missing {
				missing[i] = strconv.Quote(clip(m, 200))
			}
			return refuse("approval refused: requirements_verified (or requirements_status) does not cover every requirement of the review (one entry each, status met, with evidence); missing: %s%s. Verify them, or record feedback", strings.Join(missing, ", "), more)
		}
	}
	tr.mu.Lock()
	tr.decision, tr.approved = json.RawMessage(call.Input), approve
	tr.mu.Unlock()
	tr.event("coach_decision", map[string]any{
		"decision": d.Decision, "rationale": d.Rationale, "feedback_count": len(d.FeedbackItems), "timestamp": tr.now().Unix(),
	})
	var in map[string]json.RawMessage
	json.Unmarshal(call.Input, &in)
	if len(d.FeedbackItems) > 0 {
		reqs := in["requirements_status"]
		if reqs == nil {
			reqs = in["requirements_verified"]
		}
		if reqs == nil {
			reqs = json.RawMessage("[]")
		}
		tr.event("coach_feedback", map[string]any{"items": in["feedback_items"], "requirements_status": reqs})
	}
	items := in["feedback_items"]
	if items == nil {
		items = json.RawMessage("[]")
	}
	return jsonResult(map[string]any{
		"task_id": d.TaskID, "decision": d.Decision, "rationale": d.Rationale,
		"feedback_items": items, "is_approved": approve,
	})
}

// check holds what the schema cannot say: evidence for what is met, an
// issue for what is not, feedback that has items, an approval that does
// not contradict itself.
func (d *Decision) check() []string {
	var p []string
	for _, list := range []struct {
		name string
		reqs []RequirementStatus
	}{{"requirements_verified", d.Requirements}, {"requirements_status", d.Status}} {
		for i, r := range list.reqs {
			switch {
			case r.Status == "met" && r.Evidence == "":
				p = append(p, fmt.Sprintf("%s[%d].evidence is required when status is met", list.name, i))
			case r.Status != "met" && r.Issue == "":
				p = append(p, fmt.Sprintf("%s[%d].issue is required when status is %s", list.name, i, r.Status))
			}
			if d.Decision == "approve" && r.Status != "met" {
				p = append(p, fmt.Sprintf("decision approve with %s[%d] %s: give feedback instead", list.name, i, r.Status))
			}
		}
	}
	if d.Decision == "feedback" && len(d.FeedbackItems) == 0 {
		p = append(p, "feedback_items: a feedback decision needs at least one specific item (file, issue)")
	}
	if d.Decision != "approve" {
		return p
	}
	// The seed gives feedback when any test fails or is missing, and never
	// approves without verifying independently: an approval saying
	// otherwise of itself is refused.
	if t := d.Tests; t != nil {
		if t.Failed > 0 {
			p = append(p, "decision approve with tests_verified.failed > 0: give feedback instead")
		}
		if len(t.Failures) > 0 {
			p = append(p, "decision approve with tests_verified.failures listed: give feedback instead")
		}
		if len(t.Missing) > 0 {
			p = append(p, "decision approve with tests_verified.missing listed: give feedback instead")
		}
	}
	if c := d.Contracts; c != nil && c.Independent != nil && !*c.Independent {
		p = append(p, "decision approve with contracts_honored.independent_verification false: verify independently, or give feedback instead")
	}
	return p
}

// fault says why a test run did not pass, as the model was told.
func (r *CommandRun) fault() string {
	if r.TimedOut {
		return "it did not finish: timed out"
	}
	if r.Tests == nil {
		return fmt.Sprintf("exit code %d, no test result read", r.ExitCode)
	}
	if r.ExitCode == 0 && r.Tests.Failed == 0 {
		// Passed is false only because no test passed: the worker's tests
		// skip themselves, or none ran.
		return fmt.Sprintf("exit code 0, but no test passed in it: %d skipped, a run proves something only when its tests run", r.Tests.Skipped)
	}
	return fmt.Sprintf("exit code %d, %d failed", r.ExitCode, r.Tests.Failed)
}

// shownCounts says what a review's test runs showed, the last 10.
func shownCounts(runs []*CommandRun) string {
	more := ""
	if len(runs) > 10 {
		more, runs = fmt.Sprintf(" (and %d earlier runs)", len(runs)-10), runs[len(runs)-10:]
	}
	shown := make([]string, len(runs))
	for i, r := range runs {
		shown[i] = fmt.Sprintf("%s: %d passed, %d failed, %d skipped", clip(r.Command, 200), r.Tests.Passed, r.Tests.Failed, r.Tests.Skipped)
	}
	return "its runs showed " + strings.Join(shown, "; ") + more
}
