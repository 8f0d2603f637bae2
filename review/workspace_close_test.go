package review_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/coachd/coachd/review"
)

// heldOpen are this process's file descriptors open on dir or below it.
func heldOpen(t *testing.T, dir string) []string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("SKIPPED: no /proc/self/fd: %v", err)
	}
	var held []string
	for _, fd := range fds {
		if p, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && (p == dir || strings.HasPrefix(p, dir+"/")) {
			held = append(held, fd.Name()+" -> "+p)
		}
	}
	return held
}

// TestWorkspaceReleasedAfterReview: a review's workspace, and autobuild's
// player's, opened its directory (os.Root) and no Close closed it: the
// server held a descriptor on every workspace it had reviewed, or built
// in, until the garbage collector happened to run the root's finalizer.
func TestWorkspaceReleasedAfterReview(t *testing.T) {
	t.Run("OKReview", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetScript(coach)
		dir := sample(t, true)
		run, err := e.rv.Prepare(context.Background(), review.Request{User: e.user, TaskID: "TASK-001", Requirements: requirements,
			PlayerReport: json.RawMessage(`{"files_modified":["slug.go"]}`), Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := run.Do(context.Background(), nopSink{}); err != nil {
			t.Fatal(err)
		}
		if held := heldOpen(t, dir); len(held) > 0 {
			t.Errorf("after the review, the workspace is still open: %s", strings.Join(held, ", "))
		}
		runtime.KeepAlive(run)
	})
	t.Run("OKAutobuild", func(t *testing.T) {
		e := newEnv(t)
		e.fake.SetScript(build(e, 0))
		base := scratchBase(t)
		res, err := (&review.Build{Reviewer: e.rv, MaxTurns: 2}).Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), base)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Approved {
			t.Fatalf("build %+v", res)
		}
		if held := heldOpen(t, base); len(held) > 0 {
			t.Errorf("after the build, its copy is still open: %s", strings.Join(held, ", "))
		}
	})
}
