package review_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd/review"
)

// TestAutobuildDiffLeavesGitOut: autobuild's diff, printed after the
// build, is of the player's work. Built from a git repository, it began
// with the objects of the build's own snapshot commit (written into the
// copy's object store), each a "new file" of zlib bytes printed as text,
// before the player's change to slug.go.
func TestAutobuildDiffLeavesGitOut(t *testing.T) {
	e := newEnv(t)
	src := sample(t, false)
	gitCommitAll(t, src)
	e.fake.SetScript(build(e, 0))
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1}
	res, err := b.Run(context.Background(), e.user, "TASK-001", requirements, src, scratchBase(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Diff, "+++ b/slug.go") || !strings.Contains(res.Diff, "+\tdash := false") {
		t.Fatalf("the diff lacks the player's change to slug.go:\n%s", res.Diff)
	}
	if strings.Contains(res.Diff, ".git/") {
		t.Errorf("the diff shows the repository's own files:\n%.2000s", res.Diff)
	}
}
