// Package pgtest starts a throwaway PostgreSQL cluster for tests, once per
// test binary, from the server binaries installed on the machine (Debian's
// /usr/lib/postgresql/*/bin, or PATH), and hands out fresh databases on it.
//
// A test package that uses it must stop the cluster from TestMain:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		pgtest.Shutdown()
//		os.Exit(code)
//	}
//
// The server runs as a child of the test process with a parent-death
// signal, so even a test binary that crashes or is killed (and so never
// reaches Shutdown) leaves no server behind; data directories left by such
// runs are removed by the next run.
package pgtest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

const dirPrefix = "coachd-pgtest-"

// The cluster is process-wide by design: starting PostgreSQL takes a
// second or two, databases take milliseconds.
var (
	once    sync.Once
	mu      sync.Mutex // guards current
	current *cluster
	errMain error // why the cluster could not start
	missing bool  // errMain is "binaries not installed"
	dbSeq   atomic.Int64
)

type cluster struct {
	dir   string // temp dir: data/ and the unix socket
	port  int
	cmd   *exec.Cmd
	done  chan struct{} // closed when the server exits
	admin *sql.DB       // connected to the "postgres" database

	// What launch started it with, to start it again (Server.Restart).
	bin, data string
	cred      *syscall.Credential
}

// NewDatabase returns the DSN of a fresh, empty database on the cluster,
// starting the cluster on first use. When the PostgreSQL server binaries
// are not installed it skips the test, or fails it if $CI is set (nothing
// may be skipped in CI). The database is dropped when the test ends.
func NewDatabase(tb testing.TB) string {
	tb.Helper()
	c, err := start()
	if err != nil {
		if missing {
			missingBinaries(tb, err)
		} else {
			tb.Fatalf("pgtest: %v", err)
		}
		return ""
	}
	name := fmt.Sprintf("t%d_%d", os.Getpid(), dbSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		tb.Fatalf("pgtest: create database: %v", err)
	}
	tb.Cleanup(func() {
		// Registered before the caller opens its connections, so it runs
		// after they are closed; FORCE covers the ones that were not.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			tb.Logf("pgtest: drop database %s: %v", name, err)
		}
	})
	return c.dsn(name)
}

// missingBinaries skips the test, or fails it when $CI is set.
func missingBinaries(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("pgtest: %v; install PostgreSQL server binaries: apt-get install postgresql (CI is set: nothing may be skipped)", err)
		return
	}
	tb.Skipf("pgtest: %v; install PostgreSQL server binaries: apt-get install postgresql", err)
}

// Shutdown stops the cluster, if one was started, and removes its files.
// Call it from TestMain after m.Run().
func Shutdown() {
	mu.Lock()
	c := current
	current = nil
	mu.Unlock()
	if c != nil {
		c.stop()
	}
}

func (c *cluster) dsn(db string) string {
	return fmt.Sprintf("postgres://coachd@127.0.0.1:%d/%s?sslmode=disable", c.port, db)
}

func start() (*cluster, error) {
	once.Do(func() {
		var c *cluster
		c, errMain = startCluster()
		mu.Lock()
		current = c
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	if errMain != nil {
		return nil, errMain
	}
	if current == nil {
		return nil, errors.New("cluster already shut down")
	}
	return current, nil
}

// binDir returns the directory holding initdb and postgres: the highest
// version under /usr/lib/postgresql, else the one on PATH.
func binDir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if isExec(filepath.Join(d, "initdb")) && isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if isExec(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", errNoBinaries
}

func version(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExec(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

func startCluster() (*cluster, error) {
	c, err := newCluster()
	if err != nil {
		missing = errors.Is(err, errNoBinaries)
	}
	return c, err
}

// errNoBinaries is newCluster's error when the server is not installed.
var errNoBinaries = errors.New("PostgreSQL server binaries (initdb, postgres) not found in /usr/lib/postgresql/*/bin or PATH")

// newCluster initialises a data directory in a new temp dir and starts a
// server on it.
func newCluster() (*cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	// As root, run the server as the postgres user: initdb and postgres
	// refuse to run as root.
	var cred *syscall.Credential
	var uid, gid int = -1, -1
	base := os.TempDir()
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("running as root and no postgres user to run the server as: %w", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		base = "/tmp" // its parents must be traversable by postgres
	}
	sweep(base)
	dir, err := os.MkdirTemp(base, dirPrefix)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	if err := os.WriteFile(filepath.Join(dir, "owner.pid"), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-A", "trust", "-U", "coachd", "-E", "UTF8",
		"--locale=C", "--no-sync", "-D", data)
	initdb.Dir = dir
	initdb.Env = env()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	// A port picked by the kernel may be taken by someone else before the
	// server binds it; try a few.
	var lastErr error
	for range 5 {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		c, err := launch(bin, dir, data, cred, port)
		if err == nil {
			ok = true
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func launch(bin, dir, data string, cred *syscall.Credential, port int) (*cluster, error) {
	logf, err := os.OpenFile(filepath.Join(dir, "server.log"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1", "-c", "fsync=off", "-c", "synchronous_commit=off",
		"-c", "full_page_writes=off", "-c", "max_connections=300")
	cmd.Dir = dir
	cmd.Env = env()
	cmd.Stdout, cmd.Stderr = logf, logf
	// SIGQUIT is PostgreSQL's immediate shutdown: if the test process dies
	// without calling Shutdown, the server goes with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start postgres: %w", err)
	}
	c := &cluster{dir: dir, port: port, cmd: cmd, done: make(chan struct{}), bin: bin, data: data, cred: cred}
	go func() { cmd.Wait(); close(c.done) }()

	admin, err := sql.Open("pgx", c.dsn("postgres"))
	if err != nil {
		c.kill()
		return nil, err
	}
	c.admin = admin
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = admin.PingContext(ctx)
		cancel()
		if err == nil {
			return c, nil
		}
		select {
		case <-c.done:
			c.admin.Close()
			log, _ := os.ReadFile(filepath.Join(dir, "server.log"))
			return nil, fmt.Errorf("postgres exited: %s", strings.TrimSpace(string(log)))
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			c.stop()
			return nil, fmt.Errorf("postgres did not accept connections within 60s: %w", err)
		}
	}
}

// stop shuts the server down (halt) and removes its files.
func (c *cluster) stop() {
	c.halt()
	os.RemoveAll(c.dir)
}

// halt shuts the server down in fast mode (SIGINT: its sessions are
// ended, their transactions rolled back) and waits for it.
func (c *cluster) halt() {
	if c.admin != nil {
		c.admin.Close()
	}
	c.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-c.done:
	case <-time.After(30 * time.Second):
		c.kill()
	}
}

func (c *cluster) kill() {
	c.cmd.Process.Kill()
	<-c.done
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func env() []string {
	return []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "LANG=C", "TZ=UTC"}
}

// sweep removes data directories left by test processes that died without
// calling Shutdown (their servers died with them).
func sweep(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, dirPrefix+"*"))
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "owner.pid"))
		if err != nil {
			continue // being created, or not ours
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			os.RemoveAll(d)
		}
	}
}
