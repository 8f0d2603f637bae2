package main

import (
	"os"
	"strings"
	"testing"

	"github.com/coachd/coachd/examples"
)

// TestAutobuildCoachSeedInstructions: the README says examples/autobuild
// holds seed 003's coach with "its front matter and instructions
// unchanged". The seed's instructions end with the decision criteria, the
// output format, what good feedback is and what not to do: a coach given
// only the first half does not know what approval needs or what shape its
// answer has. The built-in copy (coachd review without --pack) is checked,
// which is the directory's.
func TestAutobuildCoachSeedInstructions(t *testing.T) {
	dir, err := examples.WriteAutobuild("")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	pack, err := loadPack(dir, func(string) string { return "" }, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var prompt string
	for _, a := range pack.Agents {
		if a.Name == "autobuild-coach" {
			prompt = a.Prompt
		}
	}
	for _, want := range []string{
		"## Your Role: COACH (Validation)", "## Critical Rules", "## Your Workflow",
		"## Required Python Calls", "validate_implementation(", "record_decision(",
		"## Decision Criteria", "### APPROVE When:", "### FEEDBACK When:",
		"## Output Format", "### If APPROVING:", "### If Providing FEEDBACK:", `"requirements_verified"`, `"feedback_items"`, `"contracts_honored"`,
		"## Feedback Quality Guidelines", "## What NOT To Do", "## What To Do",
		"Approve because \"it looks mostly done\"", "Only approve when truly complete",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the coach's instructions lack %q", want)
		}
	}
}
