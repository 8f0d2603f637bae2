package review

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxGitList bounds what gitChanged keeps of git's lists: the bytes of
// the names (the untracked ones under node_modules, a virtualenv or
// __pycache__, which no check reads, are dropped as they are read, not
// kept). A longer list is not read in part: the change it lists is not
// known. git's time is the workspace's command timeout.
const maxGitList = 4 << 20

// gitChanged are the .go files (and suiteKinds', and the test harness's:
// harnessNames) of a git workspace that differ from the
// base commit (HEAD when none), or that it does not track. Like git_diff
// it reads only the repository's commit and objects, in a private
// repository of its own. nil when the workspace is not a git repository.
// diffed are the ones the base commit has. unknown says why the list
// could not be read whole: longer than maxGitList, a repository that
// borrows its objects, git failed (the review's context done: a
// record_decision run past its turn's timeout), or a directory git does
// not track is a repository of its own (but a dependency's).
func (w *Workspace) gitChanged(ctx context.Context) (files, diffed []string, unknown string) {
	if fi, err := w.root.Lstat(".git"); err != nil || !fi.IsDir() {
		return nil, nil, ""
	}
	if why := (gitDiff{w}).borrowsObjects(); why != "" {
		return nil, nil, "the repository " + why
	}
	failed := func(run *CommandRun) string {
		if run.TimedOut {
			return "git did not finish: timed out"
		}
		return fmt.Sprintf("git failed, exit code %d: %s", run.ExitCode, clip(strings.TrimSpace(run.Output), 200))
	}
	rev := "HEAD"
	if w.opts.Base != "" {
		rev = w.opts.Base
	}
	head, _ := w.commit(ctx, rev)
	priv, err := os.MkdirTemp("", "coachd-git-")
	if err != nil {
		return nil, nil, "git could not run: " + err.Error()
	}
	defer os.RemoveAll(priv)
	gitDir := filepath.Join(priv, "repo")
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(priv, "index"), "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(w.dir, ".git", "objects"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	git := func(args ...string) []string {
		return append([]string{"git", "--git-dir=" + gitDir, "--work-tree=" + w.dir, "-c", "core.pager=cat", "--no-pager", "-c", "core.quotePath=false"}, args...)
	}
	if run := w.exec(ctx, []string{"git", "init", "-q", "--bare", gitDir}); run.ExitCode != 0 {
		return nil, nil, failed(run)
	}
	var lists [][]string // the commands that list files
	if head != "" {
		if run := w.exec(ctx, git("read-tree", head), env...); run.ExitCode != 0 {
			return nil, nil, failed(run)
		}
		lists = append(lists, git(append([]string{"diff", "-z", "--name-only", "--no-renames", "--no-ext-diff", "--no-textconv", head, "--", "*.go"}, slices.Concat(suitePathspecs(), harnessPathspecs())...)...))
	}
	// "*/": a directory that is a repository of its own, whose files
	// git does not list, is listed (as "dir/") by it.
	lists = append(lists, git(append([]string{"ls-files", "-z", "--others", "--", "*.go", "*/"}, slices.Concat(suitePathspecs(), harnessPathspecs())...)...))
	list := &gitList{}
	for i, argv := range lists {
		list.untracked = i == len(lists)-1
		run := w.execTo(ctx, list, argv, env...)
		if list.over {
			return nil, nil, "git lists more changed and untracked files than the 4 MiB of their names read"
		}
		if run.ExitCode != 0 || run.TimedOut {
			return nil, nil, failed(run)
		}
		if head != "" && i == 0 {
			diffed = slices.Clip(list.names)
		}
	}
	for _, n := range list.names[len(diffed):] {
		if strings.HasSuffix(n, "/") {
			return nil, nil, n + " is a git repository of its own, whose files git does not list"
		}
	}
	return list.names, diffed, ""
}

// gitList reads the names git lists (-z: each ended by a NUL, unquoted),
// those of an untracked list under a vendored directory but .go files
// dropped: every check leaves them out, and a node_modules holds
// thousands. over: the names kept passed maxGitList.
type gitList struct {
	untracked bool
	part      []byte // a name not yet ended
	names     []string
	size      int
	over      bool
}

func (l *gitList) Write(p []byte) (int, error) {
	n := len(p)
	for !l.over {
		i := bytes.IndexByte(p, 0)
		if i < 0 {
			l.part = append(l.part, p...)
			l.over = len(l.part) > maxGitList
			break
		}
		name := string(append(l.part, p[:i]...))
		l.part, p = l.part[:0], p[i+1:]
		if l.untracked && vendored(name) && !strings.HasSuffix(name, ".go") {
			continue
		}
		if l.size += len(name); l.size > maxGitList {
			l.over, l.names = true, nil
			break
		}
		l.names = append(l.names, name)
	}
	return n, nil
}
