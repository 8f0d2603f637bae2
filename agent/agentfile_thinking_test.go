package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
)

// Claude refuses every request that sets thinking and a temperature other
// than 1 (400 "temperature may only be set to 1 when thinking is
// enabled"): pack validate says so, instead of every turn failing.
func TestAgentFileThinkingTemperature(t *testing.T) {
	write := func(front string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n"+front+"---\nhi\n"), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: seedBuiltins()})
		return err
	}
	t.Run("ErrClaude", func(t *testing.T) {
		for _, front := range []string{
			"thinking: 2048\ntemperature: 0.7\n",
			"provider: bedrock\nmodel: eu.anthropic.claude-sonnet-4-5-20250929-v1:0\nthinking: 2048\ntemperature: 0\n",
		} {
			if err := write(front); err == nil || !strings.Contains(err.Error(), "temperature") {
				t.Errorf("%q: %v, want a temperature problem", front, err)
			}
		}
	})
	t.Run("OK", func(t *testing.T) {
		for _, front := range []string{
			"thinking: 2048\ntemperature: 1\n",
			"thinking: 2048\n",
			"temperature: 0.7\n",
			"provider: openai\nmodel: gpt-5.1\nthinking: 2048\ntemperature: 0.7\n", // thinking is left out there
		} {
			if err := write(front); err != nil {
				t.Errorf("%q: %v", front, err)
			}
		}
	})
}

// A tool a contract makes the agent call is one of its tools (parseContracts
// adds it), so it gets the same checks as one listed in tools: save_file
// without permissions, or run_command without commands, would refuse
// every call and the must_call could never be met.
func TestMustCallToolIsChecked(t *testing.T) {
	write := func(front string) error {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n"+front+"---\nhi\n"), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: append(seedBuiltins(), testTool{"run_command", nil})})
		return err
	}
	for front, want := range map[string]string{
		"contracts:\n  must_call: [save_file]\n":   "save_file needs permissions",
		"contracts:\n  must_call: [run_command]\n": "run_command needs commands",
	} {
		if err := write(front); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", front, err, want)
		}
	}
	if err := write("permissions:\n  default: [profile]\ncontracts:\n  must_call: [save_file]\n"); err != nil {
		t.Errorf("with permissions: %v", err)
	}
}
