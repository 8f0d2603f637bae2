package review

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func runResult(t *testing.T, ws *Workspace, command string) CommandRun {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"command": command})
	res := execTool(t, ws, RunCommandTool, string(in))
	if res.IsError {
		t.Fatalf("run_command %q: %s", command, res.Content)
	}
	var run CommandRun
	if err := json.Unmarshal([]byte(res.Content), &run); err != nil {
		t.Fatal(err)
	}
	return run
}

func TestRunCommandAllowList(t *testing.T) {
	ws, dir := newWorkspace(t, Options{Commands: []string{"go test ./...", "sh ok.sh"}})
	write(t, filepath.Join(dir, "ok.sh"), "echo fine\n")
	for _, cmd := range []string{
		"go test ./... ; touch pwned", "go test ./... && touch pwned", "go test ./... | tee pwned",
		"go test $(touch pwned)", "sh -c 'touch pwned'", "rm -rf .", "go  vet ./...",
	} {
		in, _ := json.Marshal(map[string]string{"command": cmd})
		res := execTool(t, ws, RunCommandTool, string(in))
		if !res.IsError || !strings.Contains(res.Content, "is not allowed") || !strings.Contains(res.Content, "go test ./...; sh ok.sh") {
			t.Errorf("%q: %+v", cmd, res)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Fatal("a refused command ran")
	}
	// Spaces are normalised, nothing else: the allowed line runs.
	if run := runResult(t, ws, "  sh   ok.sh "); run.ExitCode != 0 || run.Output != "fine\n" || run.Command != "sh ok.sh" {
		t.Fatalf("allowed command: %+v", run)
	}
}

func TestRunCommandEnvScrubbed(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
	t.Setenv("COACHD_ADMIN_KEY", "admin-secret")
	ws, _ := newWorkspace(t, Options{Commands: []string{"env"}})
	run := runResult(t, ws, "env")
	if strings.Contains(run.Output, "secret") || !strings.Contains(run.Output, "GOPROXY=off") || !strings.Contains(run.Output, "HOME=") {
		t.Fatalf("environment: %s", run.Output)
	}
}

func TestRunCommandTimeoutKillsGroup(t *testing.T) {
	ws, dir := newWorkspace(t, Options{Commands: []string{"sh hang.sh"}, Timeout: 500 * time.Millisecond})
	// The child outlives its parent unless the whole group is killed.
	write(t, filepath.Join(dir, "hang.sh"), "sleep 60 &\necho $! > child.pid\nsleep 60\n")
	start := time.Now()
	run := runResult(t, ws, "sh hang.sh")
	if !run.TimedOut || run.ExitCode == 0 || !strings.Contains(run.Output, "timeout") {
		t.Fatalf("not killed at the timeout: %+v", run)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("run_command returned after %s", d)
	}
	b, err := os.ReadFile(filepath.Join(dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	// Dead is gone or a zombie (killed, not yet reaped by init).
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if f := strings.Fields(string(stat)); err == nil && len(f) > 2 && f[2] != "Z" {
			t.Fatalf("child %d still alive after the timeout: state %s", pid, f[2])
		}
	}
}

func TestRunCommandOutputCap(t *testing.T) {
	ws, dir := newWorkspace(t, Options{Commands: []string{"sh big.sh"}})
	write(t, filepath.Join(dir, "big.sh"), "echo FIRST\ni=0\nwhile [ $i -lt 20000 ]; do echo 'line of filler output'; i=$((i+1)); done\necho LAST\n")
	run := runResult(t, ws, "sh big.sh")
	if !strings.HasPrefix(run.Output, "FIRST\n") || !strings.HasSuffix(run.Output, "LAST\n") || !strings.Contains(run.Output, "bytes cut") ||
		len(run.Output) > 2*outputKeep+100 || run.OutputBytes < 400000 {
		t.Fatalf("output %d bytes (of %d): head %q tail %q", len(run.Output), run.OutputBytes, run.Output[:20], run.Output[len(run.Output)-20:])
	}
}

// goModule is a tiny Go module whose test passes or fails.
func goModule(t *testing.T, pass bool) string {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "go.mod"), "module example.com/m\n\ngo 1.24\n")
	body := "a + b"
	if !pass {
		body = "a - b"
	}
	write(t, filepath.Join(dir, "add.go"), "package m\n\nfunc Add(a, b int) int { return "+body+" }\n")
	write(t, filepath.Join(dir, "add_test.go"), addTestFile)
	return dir
}

func TestRunCommandGoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	for _, pass := range []bool{true, false} {
		ws, err := NewWorkspace(goModule(t, pass), Options{Commands: []string{"go test -v ./..."}})
		if err != nil {
			t.Fatal(err)
		}
		run := runResult(t, ws, "go test -v ./...")
		if run.Tests == nil || run.Passed() != pass || (pass && run.Tests.Passed != 1) || (!pass && run.Tests.Failed != 1) {
			t.Fatalf("pass=%v: %+v tests %+v", pass, run, run.Tests)
		}
		t.Logf("network isolated: %v", run.NetworkIsolated)
	}
}

func TestGitDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	ws, dir := newWorkspace(t, Options{})
	if res := execTool(t, ws, "git_diff", `{}`); !res.IsError || !strings.Contains(res.Content, "git") {
		// newWorkspace's .git is a fake directory: git refuses it.
		t.Fatalf("fake .git: %+v", res)
	}
	os.RemoveAll(filepath.Join(dir, ".git"))
	if res := execTool(t, ws, "git_diff", `{}`); !res.IsError || !strings.Contains(res.Content, "not a git repository") {
		t.Fatalf("no repository: %+v", res)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", "main.go")
	git("commit", "-q", "-m", "init")
	write(t, filepath.Join(dir, "main.go"), "package main\n\nfunc main() {\n\tprintln(\"changed\")\n}\n")
	res := execTool(t, ws, "git_diff", `{}`)
	if res.IsError || !strings.Contains(res.Content, "main.go | 2 +-") || !strings.Contains(res.Content, `+	println("changed")`) {
		t.Fatalf("git_diff: %+v", res)
	}
	if res := execTool(t, ws, "git_diff", `{"path":"../"}`); !res.IsError {
		t.Fatalf("path outside: %+v", res)
	}
}

// addTestFile is add_test.go of the modules the tests build: TestAdd
// checks that Add(2, 3) is 5.
const addTestFile = "package m\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal(\"Add(2, 3) != 5\")\n\t}\n}\n"
