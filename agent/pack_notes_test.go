package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// notes.yaml's problems are reported like the agent files': each at its
// line, in the operator's words (no Go type in the message), all of them.
func TestNoteVocabularyProblems(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n---\nhi\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("types: [goal, injury, goal]\nkinds: [x]\ncategories: [Bad]\n"), 0o644)
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	var pe *agent.PackError
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want problems", err)
	}
	want := []string{
		`notes.yaml:1: types: "goal" is listed twice`,
		`notes.yaml:2: unknown key "kinds" (known: types, categories)`,
		`notes.yaml:3: categories: "Bad" must be a lowercase name (letters, digits, - and _)`,
	}
	var got []string
	for _, p := range pe.Problems {
		got = append(got, p.String())
	}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("problem %d: got %q, want %q", i, got[i], want[i])
		}
	}
}

// A pack directory whose path holds glob characters ("coach [v2]") is
// read like any other: its files are listed, not matched as a pattern.
func TestLoadPackDirWithGlobCharacters(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "coach [v2]*")
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n---\nhi\n"), 0o644)
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Agents) != 1 || p.Agents[0].Name != "a" {
		t.Fatalf("agents %v", p.Agents)
	}
}

// An internal agent (triggers: []) named "default" is not the pack's
// default while another agent is there for user keys: a request naming no
// agent would be refused (403) for every user.
func TestInternalAgentNamedDefault(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
	os.WriteFile(filepath.Join(dir, "agents", "default.md"), []byte("---\nname: default\ndescription: d\ntriggers: []\n---\nhi\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "agents", "coach.md"), []byte("---\nname: coach\ndescription: d\n---\nhi\n"), 0o644)
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Default().Name; got != "coach" {
		t.Fatalf("default agent %q, want coach", got)
	}
}
