package review

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRunCommandNotCached: go test replays a cached result ("ok (cached)")
// when the test binary and the files and variables the tests read are
// unchanged, and the player's runs and the coach's share the go build
// cache. A test whose outcome depends on what go does not track (here a
// file checked by a child process; in the wild the time, the network, a
// flaky race) passed once in a run of the player's, and the coach's own
// run then "passed" without running it: a replay of the worker's claim.
func TestRunCommandNotCached(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/cached\n\ngo 1.24\n")
	write(t, filepath.Join(dir, "state_test.go"), "package cached\n\nimport (\n\t\"os/exec\"\n\t\"testing\"\n)\n\n"+
		"func TestState(t *testing.T) {\n\tif exec.Command(\"test\", \"-e\", \"state-ok\").Run() != nil {\n\t\tt.Fatal(\"state-ok is gone\")\n\t}\n}\n")
	write(t, filepath.Join(dir, "state-ok"), "")
	ws, err := NewWorkspace(dir, Options{Commands: []string{"go test ./..."}})
	if err != nil {
		t.Fatal(err)
	}
	if run := runResult(t, ws, "go test ./..."); !run.Passed() {
		t.Fatalf("first run: %+v", run)
	}
	if err := os.Remove(filepath.Join(dir, "state-ok")); err != nil {
		t.Fatal(err)
	}
	if run := runResult(t, ws, "go test ./..."); run.Passed() || run.Tests == nil || run.Tests.Failed != 1 {
		t.Fatalf("second run passed without running the test:\n%s", run.Output)
	}
}
