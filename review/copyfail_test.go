package review_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/review"
)

// TestAutobuildCopyFailsLeavesNothing: a workspace too large to copy (a
// 201 MiB file, sparse here) is refused, and the copy made of it up to
// then was left under --scratch: each attempt left another, with no
// player's work in it to keep.
func TestAutobuildCopyFailsLeavesNothing(t *testing.T) {
	e := newEnv(t)
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "a.go"), []byte("package a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "z.bin"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(src, "z.bin"), 201<<20); err != nil {
		t.Fatal(err)
	}
	scratch := scratchBase(t)
	var log bytes.Buffer
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1, Log: &log}
	_, err := b.Run(context.Background(), e.user, "TASK-001", requirements, src, scratch)
	if err == nil || !strings.Contains(err.Error(), "too large to copy") {
		t.Fatalf("build of a workspace too large to copy: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(scratch, "coachd-autobuild-*")); len(left) > 0 {
		t.Errorf("the failed copy is left behind: %v", left)
	}
}
