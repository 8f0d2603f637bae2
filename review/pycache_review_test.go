package review

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// prefixScript prints the run's bytecode prefix and imports a standard
// library module that no Python imports at startup, so a run compiles it.
const prefixScript = "import sys, json, difflib\nprint('prefix=' + str(sys.pycache_prefix))\n"

// TestRunCommandPycacheReused: each coach run had a fresh
// PYTHONPYCACHEPREFIX, so every pytest run of a review compiled the
// standard library and pytest again (0.5 to 1 s a run, against 0.2 s with
// bytecode). The prefix is the review's now: its runs share it (the
// second finds the first one's bytecode), no two reviews share one (a
// worker's run, which is never a review's, cannot fill it), and it is
// removed when the review ends (Workspace.Close).
func TestRunCommandPycacheReused(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIPPED: python3 is not installed")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "show.py"), prefixScript)
	prefix := func(w *Workspace) string {
		t.Helper()
		run := w.exec(context.Background(), []string{"python3", "show.py"})
		_, p, ok := strings.Cut(strings.TrimSpace(run.Output), "prefix=")
		if run.ExitCode != 0 || !ok || p == "None" {
			t.Fatalf("python3 show.py: exit %d: %s", run.ExitCode, run.Output)
		}
		return p
	}
	review := func() *Workspace {
		w, err := NewWorkspace(dir, Options{Commands: []string{"python3 show.py"}, Trace: NewTrace("TASK-001")})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	w := review()
	first := prefix(w)
	compiled := 0
	filepath.WalkDir(first, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".pyc") {
			compiled++
		}
		return nil
	})
	if compiled == 0 {
		t.Fatalf("the review's first run left no bytecode under %s for its next runs", first)
	}
	if second := prefix(w); second != first {
		t.Errorf("the review's second run compiled into %s, not into the first run's %s", second, first)
	}
	other := review()
	defer other.Close()
	if p := prefix(other); p == first {
		t.Errorf("another review's run shares the prefix %s", p)
	}
	w.Close()
	if _, err := os.Lstat(first); !os.IsNotExist(err) {
		t.Errorf("the review's prefix %s is left after it ended: %v", first, err)
	}
	// The worker's runs (a workspace with no trace: autobuild's player)
	// keep a prefix of their own run each.
	player, err := NewWorkspace(dir, Options{Commands: []string{"python3 show.py"}})
	if err != nil {
		t.Fatal(err)
	}
	defer player.Close()
	if a, b := prefix(player), prefix(player); a == b {
		t.Errorf("the worker's two runs share the prefix %s", a)
	}
}

// BenchmarkPytestRun: one pytest run of a review's after its first
// (Review), and one of a workspace with no trace, whose runs each have a
// prefix of their own, as every run of a review had (RunsOwn).
func BenchmarkPytestRun(b *testing.B) {
	b.Run("Review", func(b *testing.B) { benchPytest(b, NewTrace("TASK-001")) })
	b.Run("RunsOwn", func(b *testing.B) { benchPytest(b, nil) })
}

func benchPytest(b *testing.B, tr *Trace) {
	if _, err := exec.LookPath("pytest"); err != nil {
		b.Skip("SKIPPED: pytest is not installed")
	}
	dir := b.TempDir()
	for name, s := range map[string]string{"app/__init__.py": "", "app/add.py": "def add(a, b):\n    return a + b\n",
		"tests/test_add.py": "from app.add import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n", "pytest.ini": "[pytest]\npythonpath = .\n"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	w, err := NewWorkspace(dir, Options{Commands: []string{"pytest -q -p no:cacheprovider"}, Trace: tr})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	argv := []string{"pytest", "-q", "-p", "no:cacheprovider"}
	if run := w.exec(context.Background(), argv); run.ExitCode != 0 {
		b.Fatalf("pytest: %s", run.Output)
	}
	b.ResetTimer()
	for range b.N {
		if run := w.exec(context.Background(), argv); run.ExitCode != 0 {
			b.Fatalf("pytest: %s", run.Output)
		}
	}
}

// TestPycacheOutlivesRunningRun: a review that ends while a run the turn
// left at its timeout is still being stopped keeps the prefix until that
// run ended, then removes it (else the run would write into a directory
// removed under it, and leave what it wrote).
func TestPycacheOutlivesRunningRun(t *testing.T) {
	w, err := NewWorkspace(t.TempDir(), Options{Trace: NewTrace("TASK-001")})
	if err != nil {
		t.Fatal(err)
	}
	dir, done := w.pycachePrefix(t.TempDir())
	w.Close()
	if _, err := os.Lstat(dir); err != nil {
		t.Fatalf("the prefix of a run still going was removed: %v", err)
	}
	done()
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("the prefix %s is left after the review and its last run ended: %v", dir, err)
	}
}
