package review

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"go/build"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coachd/coachd"
	"golang.org/x/sys/unix"
)

// RunCommandTool is the tool name run_command.
const RunCommandTool = "run_command"

// Output cap of a command: this much of the head and of the tail is kept.
const outputKeep = 16 << 10

// CommandRun is run_command's result.
type CommandRun struct {
	Command     string      `json:"command"`
	ExitCode    int         `json:"exit_code"`
	DurationMS  int64       `json:"duration_ms"`
	TimedOut    bool        `json:"timed_out"`
	Output      string      `json:"output"`
	OutputBytes int64       `json:"output_bytes"`
	Tests       *TestCounts `json:"tests"`
	// Packages are the packages of go test's lines that passed ("ok",
	// a test run) or have no test files: the ones the run covered (the
	// first maxPackages).
	Packages        []string `json:"packages,omitempty"`
	NetworkIsolated bool     `json:"network_isolated"`

	counts *TestCounts // of all the output, cut or not (exec)
}

// Passed reports whether the run is a test run that passed: exit code 0,
// counts parsed, nothing failed, and a test seen to pass. A run whose
// tests were all skipped, or whose packages ran none, proves nothing (the
// worker writes the tests: one that skips itself must not approve). go
// test runs verbose (scrubbedEnv), so a package "ok" without a test seen
// to pass ran none: the worker's init or TestMain exited 0 first.
func (r *CommandRun) Passed() bool {
	if r == nil || r.Tests == nil || r.TimedOut || r.ExitCode != 0 || r.Tests.Failed > 0 {
		return false
	}
	return r.Tests.Passed > 0
}

type runCommand struct{ w *Workspace }

func (t runCommand) Definition() coachd.ToolDef {
	return coachd.ToolDef{
		Name: RunCommandTool,
		Description: "Run one of the allowed commands in the workspace (no shell: the command line must be exactly one of the allowed ones) " +
			"and get its exit code, duration, output (head and tail) and the test counts parsed from go test, pytest or jest output.",
		Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{
  "type": "object",
  "properties": {"command": {"type": "string", "minLength": 1, "maxLength": 1000}},
  "required": ["command"],
  "additionalProperties": false
}`),
	}
}

func (t runCommand) Execute(ctx context.Context, call coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	var in struct{ Command string }
	if err := json.Unmarshal(call.Input, &in); err != nil {
		return refuse("invalid input: %v", err)
	}
	argv := strings.Fields(in.Command)
	line := strings.Join(argv, " ")
	if !slices.Contains(t.w.opts.Commands, line) {
		if len(t.w.opts.Commands) == 0 {
			return refuse("run_command: this agent may run no commands")
		}
		return refuse("run_command: %q is not allowed; the allowed commands are: %s", clip(line, 200), strings.Join(t.w.opts.Commands, "; "))
	}
	if tr := t.w.opts.Trace; tr != nil {
		if d, _ := tr.Decision(); d != nil {
			// record_decision is the review's last call: a run now could
			// only contradict the verdict the review is stored with.
			return refuse("run_command: this review's decision is recorded; nothing run now can change it")
		}
	}
	if flag := ownTestExec(argv); flag != "" {
		return refuse("run_command: %q sets %s, which takes the place of the run's own test program (go test runs each test binary "+
			"through it, and it decides whether the binary's run ended): the command cannot be run; its %s must be dropped from the agent's commands", clip(line, 200), flag, flag)
	}
	run := t.w.exec(ctx, argv)
	run.Command = line
	run.Tests = run.counts // read from all of the output, not the head and tail kept
	return jsonResult(run)
}

// exec runs argv in the workspace: no shell, a scrubbed environment (plus
// env), its
// own process group (killed whole at the timeout), a new network namespace
// when the kernel grants one, the output capped to head and tail.
func (w *Workspace) exec(ctx context.Context, argv []string, env ...string) *CommandRun {
	return w.execTo(ctx, nil, argv, env...)
}

// execTo is exec with the standard output written to stdout, whole, when
// not nil (gitChanged's lists), and not kept.
func (w *Workspace) execTo(ctx context.Context, stdout io.Writer, argv []string, env ...string) *CommandRun {
	ctx, cancel := context.WithTimeout(ctx, w.opts.Timeout)
	defer cancel()
	home, err := os.MkdirTemp("", "coachd-run-")
	if err == nil {
		defer os.RemoveAll(home)
	}
	out := &headTail{keep: outputKeep}
	out.lines.kind = testFramework(argv)
	argv, out.lines.framed = frameGoTest(argv)
	if out.lines.framed {
		xprog, err := testExec(home)
		if err != nil {
			return &CommandRun{ExitCode: -1, Output: fmt.Sprintf("could not start %s: %v", argv[0], err)}
		}
		argv = slices.Insert(argv, goTestAt(argv)+1, "-exec", xprog)
	}
	// The run's mark, inherited by every process it starts: what left the
	// process group is found by it after the run.
	mark := "COACHD_RUN=" + rand.Text()
	pyc, done := w.pycachePrefix(home)
	defer done()
	start := time.Now()
	isolated := true
	var cmd *exec.Cmd
	for attempt := 0; ; attempt++ {
		cmd = exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = w.dir, append(append(scrubbedEnv(home), append(env, "PYTHONPYCACHEPREFIX="+pyc)...), mark), out, out
		if stdout != nil {
			cmd.Stdout = stdout
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if isolated {
			isolate(cmd.SysProcAttr)
		}
		// The whole group: a test binary's own children die with it.
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 2 * time.Second
		err = cmd.Start()
		if err != nil && isolated && attempt == 0 && (errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC)) {
			isolated = false // no namespaces here (a container, a policy): run without
			continue
		}
		break
	}
	run := &CommandRun{NetworkIsolated: isolated}
	if err != nil {
		run.ExitCode = -1
		run.Output = fmt.Sprintf("could not start %s: %v", argv[0], errors.Unwrap(err))
		return run
	}
	ns := ""
	if isolated {
		ns = netNS(cmd.Process.Pid)
	}
	err = cmd.Wait()
	// Whatever the leader did, nothing of the group outlives the call, nor
	// what left the group (setsid) but is still the run's.
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	killLeft(ns, mark)
	run.DurationMS = time.Since(start).Milliseconds()
	run.TimedOut = ctx.Err() != nil
	run.ExitCode = cmd.ProcessState.ExitCode()
	if run.TimedOut {
		out.Write([]byte(fmt.Sprintf("\n[killed after %s: timeout]\n", w.opts.Timeout)))
	}
	run.Output, run.OutputBytes, run.counts = out.String(), out.total, out.lines.counts()
	run.Packages = out.lines.pkgs
	return run
}

// isolate asks for a private network namespace (no interfaces but a down
// loopback): as root a new net namespace, otherwise a user namespace too.
func isolate(a *syscall.SysProcAttr) {
	if os.Getuid() == 0 {
		a.Cloneflags = syscall.CLONE_NEWNET
		return
	}
	a.Cloneflags = syscall.CLONE_NEWNET | syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
}

// netNS names pid's network namespace ("net:[…]"); "" when unknown.
func netNS(pid int) string {
	s, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/ns/net")
	return s
}

// killLeft kills every process left of a run: in its own network
// namespace ns (a daemon that left the process group is still in it), or
// carrying its environment mark. The server's namespace is never a
// command's, and is never swept.
func killLeft(ns, mark string) {
	if ns == netNS(os.Getpid()) {
		ns = ""
	}
	tag := []byte("\x00" + mark + "\x00")
	for range 10 { // until none is left: one may fork while the sweep runs
		entries, err := os.ReadDir("/proc")
		if err != nil {
			return
		}
		found, killed := false, []int(nil) // killed: their pidfds
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || pid == os.Getpid() {
				continue
			}
			// Held first (a pidfd), so a pid reused after the check below
			// is never the one killed.
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil && !errors.Is(err, unix.ENOSYS) {
				continue // gone already
			}
			env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
			if ns != "" && netNS(pid) == ns || bytes.Contains(append([]byte{0}, env...), tag) {
				found = true
				if err != nil { // Linux before 5.3: no pidfd to hold or wait on
					syscall.Kill(pid, syscall.SIGKILL)
					continue
				}
				if unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil {
					killed = append(killed, fd)
					continue
				}
			}
			if err == nil {
				unix.Close(fd)
			}
		}
		if !found {
			return
		}
		// A SIGKILL is delivered, not done: on a busy machine the process
		// runs on for a moment, and the next sweep would find it again,
		// ten times over, and leave it running. Wait for each to exit
		// (its pidfd turns readable), a second at most.
		deadline := time.Now().Add(time.Second)
		for _, fd := range killed {
			if ms := time.Until(deadline).Milliseconds(); ms > 0 {
				unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, int(ms))
			}
			unix.Close(fd)
		}
	}
}

// scrubbedEnv is the environment of a command: no secrets (nothing of the
// server's own environment but PATH's absolute entries), a throwaway HOME
// (Python's bytecode cache in it), and Go, Python and
// Node kept offline, with the operator's Go caches so builds are warm.
// go test runs verbose (GOFLAGS -v): without it, go hides the output of a
// package whose test binary exits 0, and a worker's TestMain that ends
// with os.Exit(0) hides its failing tests behind "ok". -count=1: no
// cached result is replayed, so a run is a run (the player's and the
// coach's share the build cache; a test that passed once in the player's
// would "pass" again in the coach's unrun). GOWORK=off: go
// would read a go.work from any directory above the workspace (autobuild's
// scratch copy is under the shared temporary directory).
func scrubbedEnv(home string) []string {
	gocache := os.Getenv("GOCACHE")
	if gocache == "" {
		if d, err := os.UserCacheDir(); err == nil {
			gocache = filepath.Join(d, "go-build")
		}
	}
	modcache := os.Getenv("GOMODCACHE")
	if modcache == "" {
		modcache = filepath.Join(build.Default.GOPATH, "pkg", "mod")
	}
	return []string{
		"PATH=" + absolutePath(os.Getenv("PATH")), "HOME=" + home, "TMPDIR=" + home, "LANG=C.UTF-8", "CI=1",
		"GOCACHE=" + gocache, "GOMODCACHE=" + modcache, "GOPATH=" + filepath.Join(home, "go"),
		"GOFLAGS=-mod=mod -v -count=1", "GOWORK=off", "GOPROXY=off", "GOTOOLCHAIN=local", "GOTELEMETRY=off",
		"PIP_NO_INDEX=1", "npm_config_offline=true", "NO_COLOR=1",
		// Python's bytecode, and pytest's rewritten tests', is the run's
		// own (or its review's: Workspace.pycachePrefix): a __pycache__ left in the workspace runs instead of its
		// source when its header matches the source's size and mtime,
		// which a worker can forge (a hook compiled, an innocent file
		// put back).
		"PYTHONPYCACHEPREFIX=" + filepath.Join(home, "pycache"),
	}
}

// absolutePath is the PATH list without its relative entries: a command
// runs in the workspace, where a relative entry ("bin", or an empty one,
// which a shell takes for the current directory) would find the worker's
// own programs first (a jest that prints a passing summary) in every
// program the command starts: npm's script shell, a test's subprocess.
func absolutePath(list string) string {
	var keep []string
	for _, d := range filepath.SplitList(list) {
		if filepath.IsAbs(d) {
			keep = append(keep, d)
		}
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// headTail keeps the first and last keep bytes written, and counts the
// tests in all of them.
type headTail struct {
	keep  int
	head  []byte
	tail  []byte
	total int64
	lines testCounter
}

func (h *headTail) Write(p []byte) (int, error) {
	n0 := len(p)
	h.total += int64(n0)
	h.lines.Write(p)
	if room := h.keep - len(h.head); room > 0 {
		n := min(room, len(p))
		h.head = append(h.head, p[:n]...)
		p = p[n:]
	}
	h.tail = append(h.tail, p...)
	if len(h.tail) > 2*h.keep {
		h.tail = append(h.tail[:0], h.tail[len(h.tail)-h.keep:]...)
	}
	return n0, nil
}

// String is the output kept; go test's framing marks (frameGoTest) are
// left out.
func (h *headTail) String() string {
	s := h.string()
	if h.lines.framed {
		s = strings.ReplaceAll(s, framingMark, "")
	}
	return s
}

func (h *headTail) string() string {
	tail := h.tail
	if len(tail) > h.keep {
		tail = tail[len(tail)-h.keep:]
	}
	if cut := h.total - int64(len(h.head)) - int64(len(tail)); cut > 0 {
		return strings.ToValidUTF8(string(h.head), "") + fmt.Sprintf("\n[… %d bytes cut …]\n", cut) + strings.ToValidUTF8(string(tail), "")
	}
	return strings.ToValidUTF8(string(h.head)+string(tail), "")
}
