package review

import (
	"strings"
	"testing"
)

// A listing (go test -list) runs no test and writes no end-of-run
// profile: the run's test program passes its exit status on.
func TestTestExecListing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	ws, err := NewWorkspace(goModule(t, true), Options{Commands: []string{"go test -list . ./..."}})
	if err != nil {
		t.Fatal(err)
	}
	run := runResult(t, ws, "go test -list . ./...")
	if run.ExitCode != 0 || !strings.Contains(run.Output, "TestAdd") {
		t.Fatalf("listing: exit %d\n%s", run.ExitCode, run.Output)
	}
}
