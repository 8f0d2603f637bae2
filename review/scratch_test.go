package review_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/review"
)

// TestAutobuildScratchNotShared: autobuild put its scratch copy in a new
// directory of the shared temporary directory, so every directory above
// it was one anyone may write to: a node_modules/.bin (npm test runs the
// first jest it finds going up), a conftest.py or pytest.ini (pytest
// reads them from the directories above), a go.mod planted there
// changed what the worker's tests ran. A scratch directory under a
// directory others can write to is refused now, before anything runs.
func TestAutobuildScratchNotShared(t *testing.T) {
	e := newEnv(t)
	shared := filepath.Join(t.TempDir(), "tmp")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil { // what /tmp is
		t.Fatal(err)
	}
	write(t, filepath.Join(shared, "node_modules", ".bin", "jest"), "#!/bin/sh\necho 'Tests:       1 passed, 1 total'\n")
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1}
	res, err := b.Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), shared)
	if coachd.ErrorCode(err) != coachd.EINVALID {
		t.Fatalf("build in a shared directory: %+v, %v; want EINVALID", res, err)
	}
	if entries, _ := os.ReadDir(shared); len(entries) != 1 {
		t.Fatalf("the shared directory holds %d entries: a scratch copy was made", len(entries))
	}
	// In a private directory it runs, in a scratch copy only its user can enter.
	e.fake.SetScript(build(e, 0))
	res, err = b.Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), scratchBase(t))
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(res.Dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("scratch copy %s: %v %v, want mode 0700", res.Dir, fi.Mode(), err)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
}
