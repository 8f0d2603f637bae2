package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

func writeAgent(t *testing.T, front string) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	text := "---\nname: coach\ndescription: d\n" + front + "---\nprompt\n"
	if err := os.WriteFile(filepath.Join(dir, "agents", "coach.md"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRequiresApprovalFile(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		dir := writeAgent(t, `tools: [save_note, update_note, list_notes]
requires_approval:
  - update_note
  - crm__*
  - billing__refund
  - tool: save_note
    when:
      importance: {gte: 4}
      content: {contains: password}
`)
		p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := p.Agent("coach")
		if len(a.Approvals) != 4 || a.Approvals[3].Tool != "save_note" || len(a.Approvals[3].When) != 2 {
			t.Fatalf("approvals %+v", a.Approvals)
		}
		def := func(name string) coachd.ToolDef { return coachd.ToolDef{Name: name} }
		for _, c := range []struct {
			tool, input string
			want        bool
		}{
			{"update_note", `{}`, true},
			{"crm__contacts_delete", `{}`, true},
			{"crmx", `{}`, false},
			{"list_notes", `{}`, false},
			{"save_note", `{"importance":5,"content":"my password is x"}`, true},
			{"save_note", `{"importance":5,"content":"groceries"}`, false},
			{"save_note", `{"importance":2,"content":"my password"}`, false},
			{"save_note", `{"content":"my password"}`, false},
		} {
			if _, got := a.ApprovalReason(def(c.tool), json.RawMessage(c.input)); got != c.want {
				t.Errorf("%s %s: approval %v, want %v", c.tool, c.input, got, c.want)
			}
		}
	})
	t.Run("ErrProblems", func(t *testing.T) {
		dir := writeAgent(t, `tools: [save_note, show_options]
requires_approval:
  - nope
  - show_options
  - "crm[__*"
  - tool: save_note
    when: {colour: red}
  - tool: save_note
    when: {importance: {between: 3}}
  - tool: save_note
    when: {importance: {gt: [1]}, title: {in: x}}
  - tool: save_note
    if: {}
  - {when: {a: 1}}
`)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
		if err == nil {
			t.Fatal("want problems")
		}
		got := err.Error()
		for _, want := range []string{
			`coach.md:6: requires_approval: unknown tool "nope"`,
			`coach.md:7: requires_approval: show_options is interactive`,
			`coach.md:8: requires_approval: "crm[__*" is not a valid glob`,
			`coach.md:10: requires_approval: save_note has no input field "colour"`,
			`coach.md:12: requires_approval: importance: unknown op "between"`,
			`coach.md:14: requires_approval: importance: gt needs a number or a string`,
			`coach.md:14: requires_approval: title: in needs a list of values`,
			`coach.md:16: unknown key "if"`,
			`coach.md:17: requires_approval: tool is required`,
		} {
			if !strings.Contains(got, want) {
				t.Errorf("missing %q in:\n%s", want, got)
			}
		}
	})
}

func TestApprovalConditions(t *testing.T) {
	def := coachd.ToolDef{Name: "t"}
	for _, c := range []struct {
		name  string
		cond  agent.Condition
		input string
		want  bool
	}{
		{"EqString", agent.Condition{Field: "s", Op: "eq", Value: "a"}, `{"s":"a"}`, true},
		{"EqNumber", agent.Condition{Field: "n", Op: "eq", Value: 3.0}, `{"n":3}`, true},
		{"EqTypeMismatch", agent.Condition{Field: "n", Op: "eq", Value: "3"}, `{"n":3}`, false},
		{"NeMissing", agent.Condition{Field: "s", Op: "ne", Value: "a"}, `{}`, true},
		{"Ne", agent.Condition{Field: "s", Op: "ne", Value: "a"}, `{"s":"a"}`, false},
		{"Lt", agent.Condition{Field: "n", Op: "lt", Value: 3.0}, `{"n":2.5}`, true},
		{"LteEqual", agent.Condition{Field: "n", Op: "lte", Value: 3.0}, `{"n":3}`, true},
		{"GtNot", agent.Condition{Field: "n", Op: "gt", Value: 3.0}, `{"n":3}`, false},
		{"GteString", agent.Condition{Field: "d", Op: "gte", Value: "2026-01-01"}, `{"d":"2026-03-01"}`, true},
		{"GtMixedTypes", agent.Condition{Field: "n", Op: "gt", Value: 3.0}, `{"n":"nine"}`, false},
		{"GtNumericString", agent.Condition{Field: "n", Op: "gt", Value: 3.0}, `{"n":"9"}`, true},
		{"In", agent.Condition{Field: "s", Op: "in", Value: []any{"a", "b"}}, `{"s":"b"}`, true},
		{"InNot", agent.Condition{Field: "s", Op: "in", Value: []any{"a", "b"}}, `{"s":"c"}`, false},
		{"ContainsString", agent.Condition{Field: "s", Op: "contains", Value: "pass"}, `{"s":"my password"}`, true},
		{"ContainsList", agent.Condition{Field: "l", Op: "contains", Value: "x"}, `{"l":["y","x"]}`, true},
		{"ContainsListNot", agent.Condition{Field: "l", Op: "contains", Value: "z"}, `{"l":["y","x"]}`, false},
		{"Nested", agent.Condition{Field: "a.b", Op: "eq", Value: true}, `{"a":{"b":true}}`, true},
		{"NestedMissing", agent.Condition{Field: "a.b", Op: "eq", Value: true}, `{"a":1}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &agent.Agent{Approvals: []agent.ApprovalRule{{Tool: "t", When: []agent.Condition{c.cond}}}}
			if _, got := a.ApprovalReason(def, json.RawMessage(c.input)); got != c.want {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
}

// BenchmarkApprovalReason is the check every tool call pays: without rules,
// with rules that name other tools, and with a conditioned rule on the
// called tool (its input is decoded) that does not hold.
func BenchmarkApprovalReason(b *testing.B) {
	def := coachd.ToolDef{Name: "save_note"}
	in := json.RawMessage(`{"note_type":"tip","title":"Hydrate","content":"Drink water","importance":3}`)
	b.Run("NoRules", func(b *testing.B) {
		a := &agent.Agent{}
		for b.Loop() {
			a.ApprovalReason(def, in)
		}
	})
	rules := &agent.Agent{Approvals: []agent.ApprovalRule{
		{Tool: "crm__*"},
		{Tool: "save_note", When: []agent.Condition{{Field: "importance", Op: "gte", Value: 5.0}}},
	}}
	b.Run("OtherTools", func(b *testing.B) {
		other := coachd.ToolDef{Name: "list_notes"}
		for b.Loop() {
			rules.ApprovalReason(other, in)
		}
	})
	b.Run("Condition", func(b *testing.B) {
		for b.Loop() {
			rules.ApprovalReason(def, in)
		}
	})
}
