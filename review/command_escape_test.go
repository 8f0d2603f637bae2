package review

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestRunCommandKillsDaemons: a command's child that leaves the process
// group (setsid, as a test that starts a server does, or a worker's
// process left to tamper with the workspace while the validator looks)
// must not outlive run_command: it would stay on the server, and in
// autobuild run on through the coach's independent review.
func TestRunCommandKillsDaemons(t *testing.T) {
	ws, dir := newWorkspace(t, Options{Commands: []string{"sh daemon.sh"}})
	// The daemon writes its pid once it is in a session of its own; the
	// script ends only then.
	write(t, filepath.Join(dir, "daemon.sh"), "setsid sh -c 'echo $$ > daemon.pid; exec sleep 600' </dev/null >/dev/null 2>&1 &\n"+
		"while [ ! -s daemon.pid ]; do :; done\necho started\n")
	run := runResult(t, ws, "sh daemon.sh")
	t.Logf("network isolated: %v", run.NetworkIsolated)
	b, err := os.ReadFile(filepath.Join(dir, "daemon.pid"))
	if err != nil || run.ExitCode != 0 {
		t.Fatalf("run %+v: %v", run, err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pid <= 1 {
		t.Fatalf("daemon pid %q", b)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if f := strings.Fields(string(stat)); err == nil && len(f) > 2 && f[2] != "Z" {
			syscall.Kill(pid, syscall.SIGKILL) // the test's own daemon
			t.Fatalf("the daemon %d outlived run_command: state %s", pid, f[2])
		}
	}
}
