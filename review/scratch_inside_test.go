package review_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/review"
)

// TestAutobuildScratchInsideWorkspace: a scratch directory inside the
// workspace (--scratch .autobuild, run from the repository) was copied
// into its own copy as the copy was made, a level deeper at each step,
// until the path was too long for the file system. It is refused, before
// anything is copied, saying why.
func TestAutobuildScratchInsideWorkspace(t *testing.T) {
	e := newEnv(t)
	src := filepath.Join(scratchBase(t), "ws")
	if err := os.CopyFS(src, os.DirFS(sample(t, false))); err != nil {
		t.Fatal(err)
	}
	scratch := filepath.Join(src, ".autobuild")
	if err := os.Mkdir(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1}
	_, err := b.Run(context.Background(), e.user, "TASK-001", requirements, src, scratch)
	if err == nil || !strings.Contains(err.Error(), "inside the workspace") {
		t.Fatalf("scratch directory inside the workspace: %v", err)
	}
	if left, _ := os.ReadDir(scratch); len(left) > 0 {
		t.Errorf("copies were made: %v", left)
	}
}
