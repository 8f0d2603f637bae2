package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// MustBinary builds the coachd binary once per test run.
func MustBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "coachd-bin-")
		if buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "coachd")
		out, err := exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
		if err != nil {
			buildErr = err
			t.Logf("go build: %s", out)
		}
	})
	if buildErr != nil {
		t.Fatalf("build coachd: %v", buildErr)
	}
	return builtBin
}

// proc is coachd running as a real process.
type proc struct {
	cmd    *exec.Cmd
	url    string
	key    string // the demo key, when started with --demo
	stderr *syncBuffer
	exited chan struct{}
}

var demoKeyRe = regexp.MustCompile(`API key: (ck_[A-Za-z0-9_-]+)`)

// MustStart runs "coachd serve args..." as a process with env added to
// ours and waits for its listening line.
func MustStart(t testing.TB, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(MustBinary(t), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := demoKeyRe.FindStringSubmatch(sc.Text()); m != nil {
				p.key = m[1]
			}
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				p.url = m[1]
				close(ready)
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.kill() })
	select {
	case <-ready:
	case <-p.exited:
		t.Fatalf("coachd exited before listening:\n%s", p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("coachd did not start:\n%s", p.stderr)
	}
	return p
}

// kill ends the process with SIGKILL: no shutdown code runs.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}
