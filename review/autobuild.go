package review

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// Scratch copy bounds: autobuild copies the workspace before the player
// touches it.
const (
	maxCopyFiles = 20000
	maxCopyBytes = 200 << 20
)

// Build is the player/coach loop: the player works in a scratch copy of
// the workspace, reports, the coach reviews; its feedback goes back to the
// player until the coach approves or MaxTurns pass.
type Build struct {
	Reviewer *Reviewer
	// Player is the implementing agent; "" picks the first agent with
	// write_file.
	Player   string
	MaxTurns int
	// Log receives one line per step (nil: discarded).
	Log io.Writer
}

// BuildResult is how a build ended.
type BuildResult struct {
	Approved bool             `json:"approved"`
	Turns    int              `json:"turns"`
	Dir      string           `json:"workspace"` // the scratch copy, with the player's work
	Reviews  []*coachd.Review `json:"reviews"`
	Diff     string           `json:"diff"` // from the original workspace to Dir
}

// Run builds the task from the workspace src. The scratch copy is made
// in a new directory (mode 0700) under scratch ("" is the user's cache
// directory's coachd/autobuild); it is left for the caller to inspect,
// and removed by a later run once older than ScratchMaxAge.
// scratch and every directory above it must be writable by no other user
// (privateDir).
func (b *Build) Run(ctx context.Context, u *coachd.User, taskID string, requirements []string, src, scratch string) (*BuildResult, error) {
	if b.MaxTurns < 1 {
		return nil, coachd.Invalid(coachd.FieldError{Field: "max_turns", Message: "must be at least 1", Code: "range"})
	}
	player, err := b.player()
	if err != nil {
		return nil, err
	}
	if scratch == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return nil, coachd.Errorf(coachd.EINVALID, "autobuild needs a directory for its scratch copies: %v", err)
		}
		scratch = filepath.Join(cache, "coachd", "autobuild")
		if err := os.MkdirAll(scratch, 0o700); err != nil {
			return nil, err
		}
	}
	if scratch, err = privateDir(scratch, "autobuild's scratch directory"); err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return nil, err
	}
	// A copy made inside the workspace would be copied into itself.
	if rel, err := filepath.Rel(real, scratch); err == nil && filepath.IsLocal(rel) {
		return nil, coachd.Errorf(coachd.EINVALID, "autobuild's scratch directory %s is inside the workspace %s: each copy would be copied into itself; use a directory outside it", scratch, src)
	}
	// The workspace may be an earlier build's copy, however old: kept.
	if n, err := pruneScratch(scratch, time.Now().Add(-ScratchMaxAge), real); err != nil {
		b.logf("scratch: could not remove old copies: %v", err)
	} else if n > 0 {
		b.logf("scratch: removed %d copies older than %s", n, ScratchMaxAge)
	}
	dir, err := os.MkdirTemp(scratch, scratchPrefix)
	if err != nil {
		return nil, err
	}
	skipped, pointers, err := copyTree(src, dir)
	if err != nil {
		os.RemoveAll(dir) // a part copy, with no work of the player's in it
		return nil, err
	}
	// Named now: a build that fails or is stopped leaves the player's
	// work there too.
	b.logf("copy: %s (the player works here; kept after the build)", dir)
	if len(skipped) > 0 {
		b.logf("copy: left out %d symbolic links that point outside the workspace: %s", len(skipped), strings.Join(skipped, ", "))
	}
	if len(pointers) > 0 {
		b.logf("copy: left out %d .git files that point to a repository outside the workspace (a worktree's or a submodule's), so that no git command run in the copy changes it: %s", len(pointers), strings.Join(pointers, ", "))
	}
	// The copy as the build began, to find what the player changed: its
	// report and the copy's git are its own to write (its tests can take
	// .git away).
	start, err := treeManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("autobuild: reading the copy %s: %w", dir, err)
	}
	ws, err := NewWorkspace(dir, Options{Commands: player.Commands, Write: true})
	if err != nil {
		return nil, err
	}
	defer ws.Close()
	if _, err := os.Lstat(filepath.Join(dir, ".git")); errors.Is(err, fs.ErrNotExist) {
		// The copy gets a repository of its own (its .git left out, or
		// none): else git, run there, finds the first one above it (the
		// scratch directory's, in a home kept in git), and the snapshot
		// below is git_diff's start.
		if run := ws.exec(ctx, []string{"git", "init", "-q"}, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"); run.ExitCode != 0 {
			b.logf("copy: no repository of its own (git init exit %d): %s", run.ExitCode, clip(run.Output, 500))
		}
	}
	// The commit the coach's git_diff starts from: the workspace as the
	// build began, the user's uncommitted edits in it (they are not the
	// player's), and not HEAD, which the player's commands can move (a
	// test that commits the work tree shows "no changes").
	base := ""
	if fi, err := os.Lstat(filepath.Join(dir, ".git")); err == nil && fi.IsDir() {
		if base, err = ws.snapshot(ctx); err != nil {
			base, _ = ws.commit(ctx, "HEAD")
			b.logf("copy: git_diff compares with HEAD, which may hold less than the workspace did: %v", err)
		}
	}
	out := &BuildResult{Dir: dir}
	session, msg := "", playerBrief(taskID, requirements)
	for out.Turns < b.MaxTurns {
		out.Turns++
		b.logf("turn %d: %s works", out.Turns, player.Name)
		turn, err := b.Reviewer.Runner.Prepare(ctx, agent.TurnRequest{
			User: u, SessionID: session, Agent: player.Name, Message: msg, Trusted: true, Bound: ws.Tools(),
		})
		if err != nil {
			return out, err
		}
		session = turn.SessionID()
		res := turn.Run(ctx, nopSink{})
		if res.Err != nil {
			return out, res.Err
		}
		changed, unknown := []string(nil), ""
		if now, err := treeManifest(dir); err != nil {
			unknown = err.Error()
		} else {
			changed = now.changedSince(start)
		}
		run, err := b.Reviewer.Prepare(ctx, Request{User: u, TaskID: taskID, Requirements: requirements, PlayerReport: playerReport(res.Text),
			Dir: dir, Base: base, Changed: changed, Unknown: unknown})
		if err != nil {
			return out, err
		}
		b.logf("turn %d: %s reviews", out.Turns, run.agent.Name) // the pack's default coach too
		rev, rres, err := run.Do(ctx, nopSink{})
		if err != nil {
			return out, err
		}
		out.Reviews = append(out.Reviews, rev)
		if rres.Err != nil && rev.Decision == nil {
			// The coach failed (the model unreachable): no feedback to
			// give, and the player's next turn would be spent for nothing.
			return out, rres.Err
		}
		if rev.Approved {
			out.Approved = true
			b.logf("turn %d: approved", out.Turns)
			break
		}
		b.logf("turn %d: feedback (%s)", out.Turns, rres.StopReason)
		msg = feedbackBrief(rev, rres)
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	out.Diff = diffTrees(ctx, src, dir)
	return out, nil
}

func (b *Build) logf(format string, args ...any) {
	if b.Log != nil {
		fmt.Fprintf(b.Log, format+"\n", args...)
	}
}

func (b *Build) player() (*agent.Agent, error) {
	if b.Player != "" {
		a, ok := b.Reviewer.Runner.Agent(b.Player)
		if !ok {
			return nil, coachd.Errorf(coachd.ENOTFOUND, "agent %q not found", b.Player)
		}
		return a, nil
	}
	for _, a := range b.Reviewer.Agents {
		if slices.Contains(a.Tools, WriteFileTool) {
			return a, nil
		}
	}
	return nil, coachd.Errorf(coachd.ENOTFOUND, "the pack has no player agent (one with write_file)")
}

type nopSink struct{}

func (nopSink) Send(coachd.Event) error { return nil }

func playerBrief(taskID string, requirements []string) string {
	var s strings.Builder
	fmt.Fprintf(&s, "## Task: %s\nImplement these requirements in the workspace, run the tests, then end with your report as JSON.\n\n## Requirements\n", taskID)
	for i, r := range requirements {
		fmt.Fprintf(&s, "%d. %s\n", i+1, strings.TrimSpace(r))
	}
	return s.String()
}

// feedbackBrief is the player's next message: the coach's decision as it
// recorded it, or why it recorded none.
func feedbackBrief(rev *coachd.Review, res *agent.Result) string {
	if rev.Decision == nil {
		return fmt.Sprintf("## Coach feedback\nThe coach could not record a decision (its review ended with %s). Check that the tests pass and report again.", res.StopReason)
	}
	return "## Coach feedback\nThe coach did not approve. Fix every feedback item, run the tests, then report again.\n\n```json\n" + string(rev.Decision) + "\n```"
}

// Player report bounds: the report goes whole into the coach's first
// message, and the player's text (all its rounds) can be megabytes.
const (
	maxPlayerReport = 64 << 10 // bytes of report (POST /v1/reviews takes as much); of prose, its end is kept
	maxReportEnds   = 20       // '}' tried, from the last
	maxReportStarts = 50       // '{' tried before each
)

// playerReport finds the JSON report in the player's last message (the
// last {...} that parses as an object, within the text's last
// maxPlayerReport bytes); prose becomes implementation_notes, its end
// kept when it is longer. The search parses at most maxReportEnds *
// maxReportStarts candidates of at most maxPlayerReport bytes.
func playerReport(text string) json.RawMessage {
	text = strings.TrimSpace(text)
	tail, cut := text, 0
	if len(tail) > maxPlayerReport {
		cut = len(tail) - maxPlayerReport
		for cut < len(tail) && !utf8.RuneStart(tail[cut]) {
			cut++
		}
		tail = tail[cut:]
	}
	end := len(tail)
	for range maxReportEnds {
		if end = strings.LastIndex(tail[:end], "}"); end < 0 {
			break
		}
		start := end
		for range maxReportStarts {
			if start = strings.LastIndex(tail[:start], "{"); start < 0 {
				break
			}
			var m map[string]any
			if json.Unmarshal([]byte(tail[start:end+1]), &m) == nil {
				return json.RawMessage(tail[start : end+1])
			}
		}
	}
	// Escaped, a byte can take six ("\u0001"): the notes shrink until
	// they fit.
	for {
		notes := tail
		if cut > 0 {
			notes = fmt.Sprintf("[… the first %d bytes of the player's text cut …]\n", cut) + tail
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(map[string]string{"implementation_notes": notes})
		if over := b.Len() - maxPlayerReport - 100; over > 0 {
			n := len(tail) / 2
			for n < len(tail) && !utf8.RuneStart(tail[n]) {
				n++
			}
			tail, cut = tail[n:], cut+n
			continue
		}
		return bytes.TrimSpace(b.Bytes())
	}
}

// copyTree copies regular files and directories from src into dst, and
// the symbolic links whose relative target stays inside src, as links
// (a repository's README -> docs/README.md, node_modules/.bin): never
// followed. The others (absolute, or out of src: in the copy they would
// reach the original or beyond) are left out, and returned by their path
// in src; so are the .git files that point out of src (gitFileLeaves),
// in pointers.
func copyTree(src, dst string) (skipped, pointers []string, err error) {
	files, total := 0, int64(0)
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type()&fs.ModeSymlink != 0:
			if files++; files > maxCopyFiles {
				return coachd.Errorf(coachd.EINVALID, "workspace is too large to copy (over %d files or %d MiB)", maxCopyFiles, maxCopyBytes>>20)
			}
			to, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if filepath.IsAbs(to) || !filepath.IsLocal(filepath.Join(filepath.Dir(rel), to)) {
				skipped = append(skipped, rel)
				return nil
			}
			return os.Symlink(to, target)
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files, total = files+1, total+info.Size()
		if files > maxCopyFiles || total > maxCopyBytes {
			return coachd.Errorf(coachd.EINVALID, "workspace is too large to copy (over %d files or %d MiB)", maxCopyFiles, maxCopyBytes>>20)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if d.Name() == ".git" && gitFileLeaves(rel, data) {
			pointers = append(pointers, rel)
			return nil
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
	return skipped, pointers, err
}

// diffTrees is `git diff --no-index` from a to b, without the
// repository's own files (noGitDir), or a note when git is not
// installed.
func diffTrees(ctx context.Context, a, b string) string {
	a, _ = filepath.Abs(a)
	b, _ = filepath.Abs(b)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "diff", "--no-index", "--no-color", "--no-ext-diff", "--no-textconv", "--text", "--", a, b)
	out := &headOnly{keep: MaxDiffBytes}
	filter := &noGitDir{w: out, roots: []string{a, b}}
	cmd.Stdout = filter
	// HOME is the shared temporary directory, where anyone may leave a
	// .gitconfig (or .config/git/attributes): no global or system settings
	// are read, and none could run a diff program or hide a change.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1", "XDG_CONFIG_HOME=" + os.DevNull}
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		return fmt.Sprintf("(no diff: %v)", err)
	}
	filter.flush()
	// git names the files a/<abs path> and b/<abs path> (an added file's
	// a/ side by its path under b, a removed one's b/ side by its path
	// under a; renames by bare paths): keep them relative.
	// The longer root first: one may hold the other (a scratch copy
	// under the workspace).
	a, b = a+string(filepath.Separator), b+string(filepath.Separator)
	long, short := a, b
	if len(b) > len(a) {
		long, short = b, a
	}
	diff := strings.NewReplacer("a"+long, "a/", "b"+long, "b/", long, "", "a"+short, "a/", "b"+short, "b/", short, "").
		Replace(strings.ToValidUTF8(string(out.head), ""))
	if cut := out.total - int64(len(out.head)); cut > 0 {
		diff += fmt.Sprintf("\n[… %d more bytes of the diff cut …]\n", cut)
	}
	return diff
}

// MaxDiffBytes bounds autobuild's final diff: its head is kept (the
// player may have written hundreds of MiB).
const MaxDiffBytes = 1 << 20

// headOnly keeps the first keep bytes written and counts the rest.
type headOnly struct {
	keep  int
	head  []byte
	total int64
}

func (h *headOnly) Write(p []byte) (int, error) {
	h.total += int64(len(p))
	if room := h.keep - len(h.head); room > 0 {
		h.head = append(h.head, p[:min(room, len(p))]...)
	}
	return len(p), nil
}
