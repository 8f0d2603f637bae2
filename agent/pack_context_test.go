package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// sageWith loads a copy of examples/sage whose agent file has old
// replaced by new, and returns the pack's problems ("" when it loads).
func sageWith(t *testing.T, old, new string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "sage"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agents", "sage.md")
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("sage.md has no %q (%v)", old, err)
	}
	if err := os.WriteFile(path, []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		return err.Error()
	}
	p.Close()
	return ""
}

// TestContextCheckinUnknownKey: a misspelt key in context.checkin is a
// problem at its line, as one anywhere else in an agent file is. It was
// dropped unread: "every_day: 14" left the pack's 7 days in force, and
// "time_zone" looked set.
func TestContextCheckinUnknownKey(t *testing.T) {
	got := sageWith(t, "    every_days: 7\n", "    every_days: 7\n    every_day: 14\n")
	if !strings.Contains(got, `agents/sage.md:48: unknown key "every_day"`) {
		t.Fatalf("problems %q, want agents/sage.md:48: unknown key \"every_day\"", got)
	}
}

// TestContextFileTypeTypo: a file type in context.standing or
// context.recent that no agent of the pack may write is a problem at its
// line, as one in a skill rule or context.checkin is: no such file can
// exist, so the section would never show the file meant. "overveiw" was
// accepted, and the user's overview was never in the prompt.
func TestContextFileTypeTypo(t *testing.T) {
	for _, c := range []struct{ old, new, want string }{
		{"standing: [sage-context, overview,", "standing: [sage-context, overveiw,", `agents/sage.md:41: standing "overveiw": no agent of the pack may write that file type`},
		{"recent: [check-in,", "recent: [chek-in,", `agents/sage.md:42: recent "chek-in": no agent of the pack may write that file type`},
	} {
		if got := sageWith(t, c.old, c.new); !strings.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want %q", c.new, got, c.want)
		}
	}
}
