package review

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/coachd/coachd"
)

type gitDiff struct{ w *Workspace }

func (gitDiff) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name:        "git_diff",
		Description: "Show how the workspace's files differ from its last commit (git diff against HEAD, or in a build against the workspace as the build began, with a --stat summary first; files that commit does not have are not shown: list_files finds them); path narrows it.",
		Category:    coachd.ToolInstant,
		InputSchema: json.RawMessage(pathSchema),
	}
}

// borrowsObjects says why the workspace's object store reaches outside
// it ("" when it does not): alternates, or a link among its objects,
// would have the diff print another repository's files.
func (t gitDiff) borrowsObjects() string {
	for _, f := range []string{".git/objects/info/alternates", ".git/objects/info/http-alternates"} {
		if _, err := t.w.root.Lstat(f); err == nil {
			return "borrows objects from elsewhere (" + f + ")"
		}
	}
	why := ""
	err := fs.WalkDir(t.w.root.FS(), ".git/objects", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			why = "links its objects elsewhere (" + p + ")"
			return fs.SkipAll
		}
		return nil
	})
	if why == "" && err != nil {
		why = "has no readable object store"
	}
	return why
}

var commitRe = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// commit resolves rev to a commit of the workspace's repository; "" when
// it names none (run says why).
func (w *Workspace) commit(ctx context.Context, rev string) (string, *CommandRun) {
	run := w.exec(ctx, []string{"git", "--git-dir=" + filepath.Join(w.dir, ".git"), "rev-parse", "--verify", "--quiet", rev + "^{commit}"})
	if c := strings.TrimSpace(run.Output); run.ExitCode == 0 && commitRe.MatchString(c) {
		return c, run
	}
	return "", run
}

// Execute diffs the work tree against the workspace's HEAD commit. The
// repository is the worker's too: its settings could diff another
// directory (core.worktree, a .git file), hide or rewrite a change (an
// attribute, a textconv driver, a clean filter, core.fsmonitor, an index
// entry marked assume-unchanged or skip-worktree) or run its programs. So
// only its HEAD and its objects are read: the diff runs in a private
// repository of ours that borrows them, with a private index read from
// HEAD (nothing is written to the worker's repository).
func (t gitDiff) Execute(ctx context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	p, err := inputPath(call)
	if err != nil {
		return refuse("%v", err)
	}
	if fi, err := t.w.root.Lstat(".git"); err != nil || !fi.IsDir() {
		return refuse("git_diff: the workspace is not a git repository (a .git directory); read the files instead")
	}
	if why := t.borrowsObjects(); why != "" {
		return refuse("git_diff: the repository %s: read the files instead", why)
	}
	wsGit := filepath.Join(t.w.dir, ".git")
	rev := "HEAD"
	if t.w.opts.Base != "" {
		rev = t.w.opts.Base
	}
	head, run := t.w.commit(ctx, rev)
	if head == "" {
		return refuse("git diff failed: the git repository has no commit %s (exit %d): %s", rev, run.ExitCode, clip(run.Output, 500))
	}
	priv, err := os.MkdirTemp("", "coachd-git-")
	if err != nil {
		return coachd.ToolResult{}, err
	}
	defer os.RemoveAll(priv)
	gitDir := filepath.Join(priv, "repo")
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(priv, "index"), "GIT_ALTERNATE_OBJECT_DIRECTORIES=" + filepath.Join(wsGit, "objects"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"}
	git := func(args ...string) []string {
		return append([]string{"git", "--git-dir=" + gitDir, "--work-tree=" + t.w.dir, "-c", "core.pager=cat", "--no-pager"}, args...)
	}
	var b strings.Builder
	for i, argv := range [][]string{
		{"git", "init", "-q", "--bare", gitDir},
		git("read-tree", head),
		git("diff", "--stat", "--no-color", "--no-ext-diff", "--no-textconv", "--text", head, "--", p),
		git("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--text", head, "--", p),
	} {
		run := t.w.exec(ctx, argv, env...)
		if run.ExitCode != 0 {
			return refuse("git diff failed (exit %d): %s", run.ExitCode, clip(strings.ReplaceAll(run.Output, priv, "…"), 500))
		}
		if i >= 2 {
			b.WriteString(run.Output)
			b.WriteString("\n")
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return coachd.ToolResult{Content: "no changes"}, nil
	}
	return coachd.ToolResult{Content: b.String()}, nil
}

// snapshot records the work tree as it is now as a commit in the
// workspace's repository, for git_diff to compare with (autobuild's
// start): HEAD's files as they are now (the user's uncommitted edits in
// them) and the files git would add (not ignored). Its objects are
// written into the repository's object store and nothing else of it is
// touched: no ref, no index, no config. It is made in a private
// repository like git_diff's, so no setting of the repository's runs.
func (w *Workspace) snapshot(ctx context.Context) (string, error) {
	priv, err := os.MkdirTemp("", "coachd-git-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(priv)
	gitDir := filepath.Join(priv, "repo")
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(priv, "index"), "GIT_OBJECT_DIRECTORY=" + filepath.Join(w.dir, ".git", "objects"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_AUTHOR_NAME=coachd", "GIT_AUTHOR_EMAIL=autobuild@coachd.invalid", "GIT_COMMITTER_NAME=coachd", "GIT_COMMITTER_EMAIL=autobuild@coachd.invalid"}
	git := func(args ...string) []string {
		return append([]string{"git", "--git-dir=" + gitDir, "--work-tree=" + w.dir, "-c", "core.pager=cat", "--no-pager"}, args...)
	}
	if run := w.exec(ctx, []string{"git", "init", "-q", "--bare", gitDir}); run.ExitCode != 0 {
		return "", fmt.Errorf("git init (exit %d): %s", run.ExitCode, clip(run.Output, 500))
	}
	head, _ := w.commit(ctx, "HEAD") // "": no commit yet, the snapshot is the first
	steps := [][]string{git("add", "-A", "--", ".")}
	if head != "" {
		steps = slices.Insert(steps, 0, git("read-tree", head))
	}
	for _, argv := range steps {
		if run := w.exec(ctx, argv, env...); run.ExitCode != 0 {
			return "", fmt.Errorf("git %s (exit %d): %s", argv[6], run.ExitCode, clip(strings.ReplaceAll(run.Output, priv, "…"), 500))
		}
	}
	tree := w.exec(ctx, git("write-tree"), env...)
	if t := strings.TrimSpace(tree.Output); tree.ExitCode != 0 || !commitRe.MatchString(t) {
		return "", fmt.Errorf("git write-tree (exit %d): %s", tree.ExitCode, clip(tree.Output, 500))
	}
	argv := git("commit-tree", strings.TrimSpace(tree.Output), "-m", "coachd autobuild: the workspace as the build began")
	if head != "" {
		argv = append(argv, "-p", head)
	}
	run := w.exec(ctx, argv, env...)
	if c := strings.TrimSpace(run.Output); run.ExitCode == 0 && commitRe.MatchString(c) {
		return c, nil
	}
	return "", fmt.Errorf("git commit-tree (exit %d): %s", run.ExitCode, clip(run.Output, 500))
}
