package chaos

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildDir  string
)

// mustBinary builds cmd/coachd once per test run.
func mustBinary(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		if buildDir, buildErr = os.MkdirTemp("", "coachd-chaos-"); buildErr != nil {
			return
		}
		builtBin = filepath.Join(buildDir, "coachd")
		out, err := exec.Command("go", "build", "-o", builtBin, "github.com/coachd/coachd/cmd/coachd").CombinedOutput()
		if err != nil {
			buildErr = err
			tb.Logf("go build: %s", out)
		}
	})
	if buildErr != nil {
		tb.Fatalf("build coachd: %v", buildErr)
	}
	return builtBin
}

// syncBuffer keeps the last 256 KiB a process wrote to stderr.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if b.buf.Len() > 512<<10 {
		tail := append([]byte(nil), b.buf.Bytes()[b.buf.Len()-256<<10:]...)
		b.buf.Reset()
		b.buf.Write(tail)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var listeningRe = regexp.MustCompile(`coachd listening on (http://\S+)`)

// proc is coachd serve running as a process.
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *syncBuffer
	exited chan struct{}
}

// mustStart runs "coachd serve args..." with env added to ours and waits
// for its listening line.
func mustStart(tb testing.TB, env []string, args ...string) *proc {
	tb.Helper()
	cmd := exec.Command(mustBinary(tb), append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	// A test binary killed by its timeout runs no cleanup: the kernel
	// ends the server with it instead of leaving it behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listeningRe.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case ready <- m[1]:
				default:
				}
			}
		}
	}()
	go func() {
		cmd.Wait()
		close(p.exited)
	}()
	tb.Cleanup(p.kill)
	select {
	case p.url = <-ready:
	case <-p.exited:
		tb.Fatalf("coachd exited before listening:\n%s", p.stderr)
	case <-time.After(30 * time.Second):
		tb.Fatalf("coachd did not start:\n%s", p.stderr)
	}
	return p
}

// kill ends the process with SIGKILL: no shutdown code runs.
func (p *proc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// run runs a coachd subcommand to its end and returns its output and error.
func run(tb testing.TB, args ...string) (string, error) {
	tb.Helper()
	out, err := exec.Command(mustBinary(tb), args...).CombinedOutput()
	return string(out), err
}
