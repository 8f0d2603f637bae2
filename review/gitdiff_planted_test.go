package review

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// gitRepo is a repository in dir with main.go committed, then changed
// (println("changed")) but not committed.
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	write(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "main.go")
	gitIn(t, dir, "commit", "-q", "-m", "init")
	write(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"changed\")\n}\n")
}

func gitIn(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func appendFile(t *testing.T, path, s string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestGitDiffWorkerSettings: the workspace, .git included, is the
// worker's; the diff the validator reads must be the real change, not one
// the worker's repository settings hide, rewrite or fetch from elsewhere,
// and git_diff must run none of the worker's programs.
func TestGitDiffWorkerSettings(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	const change = `+	println("changed")`
	diff := func(t *testing.T, dir string) string {
		t.Helper()
		ws, err := NewWorkspace(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := execTool(t, ws, "git_diff", `{}`)
		if res.IsError {
			t.Fatalf("git_diff: %s", res.Content)
		}
		return res.Content
	}
	t.Run("BinaryAttribute", func(t *testing.T) {
		dir := t.TempDir()
		gitRepo(t, dir)
		write(t, filepath.Join(dir, ".gitattributes"), "*.go -diff\n")
		if got := diff(t, dir); !strings.Contains(got, change) {
			t.Fatalf("a -diff attribute hid the change:\n%s", got)
		}
	})
	t.Run("Textconv", func(t *testing.T) {
		dir := t.TempDir()
		gitRepo(t, dir)
		write(t, filepath.Join(dir, ".gitattributes"), "*.go diff=clean\n")
		appendFile(t, filepath.Join(dir, ".git", "config"), "[diff \"clean\"]\n\ttextconv = true\n")
		if got := diff(t, dir); !strings.Contains(got, change) {
			t.Fatalf("a textconv driver rewrote the change:\n%s", got)
		}
	})
	t.Run("Fsmonitor", func(t *testing.T) {
		dir := t.TempDir()
		gitRepo(t, dir)
		marker := filepath.Join(dir, "ran")
		write(t, filepath.Join(dir, "hook.sh"), "#!/bin/sh\ntouch "+marker+"\n")
		os.Chmod(filepath.Join(dir, "hook.sh"), 0o755)
		appendFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\tfsmonitor = "+filepath.Join(dir, "hook.sh")+"\n")
		if got := diff(t, dir); !strings.Contains(got, change) {
			t.Fatalf("diff:\n%s", got)
		}
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("git_diff ran the worker's fsmonitor hook")
		}
	})
	t.Run("Worktree", func(t *testing.T) {
		top := t.TempDir()
		dir, clean := filepath.Join(top, "ws"), filepath.Join(top, "clean")
		gitRepo(t, dir)
		write(t, filepath.Join(clean, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n")
		appendFile(t, filepath.Join(dir, ".git", "config"), "[core]\n\tworktree = "+clean+"\n")
		if got := diff(t, dir); !strings.Contains(got, change) {
			t.Fatalf("core.worktree pointed the diff at another directory:\n%s", got)
		}
	})
	t.Run("GitdirFile", func(t *testing.T) {
		top := t.TempDir()
		other, dir := filepath.Join(top, "other"), filepath.Join(top, "ws")
		write(t, filepath.Join(other, "secret.txt"), "TOP SECRET\n")
		gitIn(t, other, "init", "-q")
		gitIn(t, other, "add", "secret.txt")
		gitIn(t, other, "commit", "-q", "-m", "secret")
		write(t, filepath.Join(dir, "main.go"), "package main\n")
		write(t, filepath.Join(dir, ".git"), "gitdir: "+filepath.Join(other, ".git")+"\n")
		ws, err := NewWorkspace(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res := execTool(t, ws, "git_diff", `{}`); strings.Contains(res.Content, "TOP SECRET") {
			t.Fatalf("a .git file led git_diff to a repository outside the workspace:\n%s", res.Content)
		}
	})
	// Objects borrowed from another repository (alternates, or a linked
	// object directory), with HEAD set to that repository's commit: the
	// diff would print its files as deleted lines.
	borrowed := func(t *testing.T, link func(t *testing.T, ws, other string)) string {
		top := t.TempDir()
		other, dir := filepath.Join(top, "other"), filepath.Join(top, "ws")
		write(t, filepath.Join(other, "secret.txt"), "TOP SECRET\n")
		gitIn(t, other, "init", "-q")
		gitIn(t, other, "add", "secret.txt")
		gitIn(t, other, "commit", "-q", "-m", "secret")
		head, err := exec.Command("git", "-C", other, "rev-parse", "HEAD").Output()
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, "main.go"), "package main\n")
		gitIn(t, dir, "init", "-q")
		link(t, filepath.Join(dir, ".git"), filepath.Join(other, ".git"))
		write(t, filepath.Join(dir, ".git", "HEAD"), strings.TrimSpace(string(head))+"\n")
		ws, err := NewWorkspace(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return execTool(t, ws, "git_diff", `{}`).Content
	}
	t.Run("Alternates", func(t *testing.T) {
		got := borrowed(t, func(t *testing.T, ws, other string) {
			write(t, filepath.Join(ws, "objects", "info", "alternates"), filepath.Join(other, "objects")+"\n")
		})
		if strings.Contains(got, "TOP SECRET") {
			t.Fatalf("alternates led git_diff to another repository's objects:\n%s", got)
		}
	})
	t.Run("LinkedObjects", func(t *testing.T) {
		got := borrowed(t, func(t *testing.T, ws, other string) {
			os.RemoveAll(filepath.Join(ws, "objects"))
			if err := os.Symlink(filepath.Join(other, "objects"), filepath.Join(ws, "objects")); err != nil {
				t.Fatal(err)
			}
		})
		if strings.Contains(got, "TOP SECRET") {
			t.Fatalf("a linked object store led git_diff to another repository's objects:\n%s", got)
		}
	})
}

// TestGitDiffWorkerIndex: the index is the worker's too; a changed file it
// marks assume-unchanged or skip-worktree, or rewrites through a clean
// filter, still shows in the diff.
func TestGitDiffWorkerIndex(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	const change = `+	println("changed")`
	for name, plant := range map[string]func(t *testing.T, dir string){
		"AssumeUnchanged": func(t *testing.T, dir string) { gitIn(t, dir, "update-index", "--assume-unchanged", "main.go") },
		"SkipWorktree":    func(t *testing.T, dir string) { gitIn(t, dir, "update-index", "--skip-worktree", "main.go") },
		"CleanFilter": func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, ".gitattributes"), "*.go filter=same\n")
			appendFile(t, filepath.Join(dir, ".git", "config"), "[filter \"same\"]\n\tclean = sed s/changed/hi/\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			gitRepo(t, dir)
			plant(t, dir)
			ws, err := NewWorkspace(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res := execTool(t, ws, "git_diff", `{}`); res.IsError || !strings.Contains(res.Content, change) {
				t.Fatalf("the change is hidden: %+v", res)
			}
		})
	}
}
