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

// TestAutobuildCopiesInnerLinks: the scratch copy left every symbolic
// link out, silently, so a repository whose tests read through one (a
// README -> docs/README.md, node_modules/.bin) failed there for no reason
// shown. A link whose relative target stays inside the workspace is now
// copied as a link; one that leaves it (absolute, or up and out) is left
// out, never followed, and the run's log names it.
func TestAutobuildCopiesInnerLinks(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(player(99))
	src := sample(t, false)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(outside, []byte("not the workspace's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(src, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "docs", "guide.md"), []byte("# Guide\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, to := range map[string]string{
		"GUIDE.md":          "docs/guide.md",      // inside
		"docs/req.md":       "../REQUIREMENTS.md", // inside, through ..
		"docs/self":         ".",                  // a directory, inside
		"abs-secret":        outside,              // absolute: out
		"docs/up-and-out":   "../../x",            // relative, out
		"docs/deep-and-out": "../docs/../../y",    // relative, out after cleaning
	} {
		if err := os.Symlink(to, filepath.Join(src, link)); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1, Log: &log}
	res, _ := b.Run(context.Background(), e.user, "TASK-001", requirements, src, scratchBase(t))
	if res == nil || res.Dir == "" {
		t.Fatalf("build %+v", res)
	}
	for link, want := range map[string]string{"GUIDE.md": "# Guide\n", "docs/req.md": "", "docs/self/guide.md": "# Guide\n"} {
		p := filepath.Join(res.Dir, link)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Errorf("%s in the copy: %v", link, err)
			continue
		}
		if want != "" && string(data) != want {
			t.Errorf("%s in the copy reads %q", link, data)
		}
		if resolved, err := filepath.EvalSymlinks(p); err != nil || !strings.HasPrefix(resolved, mustEval(t, res.Dir)) {
			t.Errorf("%s in the copy resolves to %s (%v), outside the copy", link, resolved, err)
		}
	}
	for _, link := range []string{"abs-secret", "docs/up-and-out", "docs/deep-and-out"} {
		if _, err := os.Lstat(filepath.Join(res.Dir, link)); !os.IsNotExist(err) {
			t.Errorf("%s, which leaves the workspace, is in the copy (%v)", link, err)
		}
		if !strings.Contains(log.String(), link) {
			t.Errorf("the log does not name %s:\n%s", link, log.String())
		}
	}
	if !strings.Contains(log.String(), "left out 3 symbolic links") {
		t.Errorf("the log does not say what was left out:\n%s", log.String())
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
