package review

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunCommandIgnoresPlantedGoWork: go looks for a go.work in every
// directory above the one it runs in, and autobuild's scratch copy lives
// under the shared temporary directory, where anyone may leave one: it
// put go test into workspace mode, where every run failed.
func TestRunCommandIgnoresPlantedGoWork(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	parent := t.TempDir()
	dir := filepath.Join(parent, "coachd-autobuild-1")
	if err := os.Rename(goModule(t, true), dir); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(parent, "other", "go.mod"), "module example.com/other\n\ngo 1.24\n")
	write(t, filepath.Join(parent, "go.work"), "go 1.24\n\nuse ./other\n")
	tools, _ := reviewTools(t, dir, "go test ./...")
	res := call(t, tools, RunCommandTool, `{"command":"go test ./..."}`)
	if res.IsError || !strings.Contains(res.Content, `"exit_code":0`) || strings.Contains(res.Content, "go.work") {
		t.Fatalf("a go.work above the workspace changed the run: %s", res.Content)
	}
}
