package review_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/review"
)

// TestAutobuildFromAnOldCopy: a build continued from an earlier build's
// copy (--workspace naming it, in the scratch directory) first pruned
// the copies older than ScratchMaxAge, that one among them: the player's
// earlier work was deleted, and the build failed on a workspace that was
// no more. The copy being built from is kept.
func TestAutobuildFromAnOldCopy(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(build(e, 0))
	scratch := scratchBase(t)
	src := filepath.Join(scratch, "coachd-autobuild-123")
	if err := os.CopyFS(src, os.DirFS(sample(t, true))); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-review.ScratchMaxAge - time.Hour)
	if err := os.Chtimes(src, old, old); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1, Log: &log}
	res, err := b.Run(context.Background(), e.user, "TASK-001", requirements, filepath.Join(src, "."), scratch)
	if _, statErr := os.Stat(filepath.Join(src, "slug.go")); statErr != nil {
		t.Fatalf("the workspace built from was removed (%v); build: %v\n%s", statErr, err, log.String())
	}
	if err != nil || !res.Approved {
		t.Fatalf("build %+v: %v\n%s", res, err, log.String())
	}
	if strings.Contains(log.String(), "removed") {
		t.Errorf("log:\n%s", log.String())
	}
}
