package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	code := m.Run()
	Shutdown()
	os.Exit(code)
}

func TestNewDatabase(t *testing.T) {
	a, b := NewDatabase(t), NewDatabase(t)
	if a == b {
		t.Fatalf("two databases share a DSN: %s", a)
	}
	if !strings.HasPrefix(a, "postgres://coachd@127.0.0.1:") || !strings.HasSuffix(a, "?sslmode=disable") {
		t.Fatalf("DSN = %s", a)
	}
	ctx := context.Background()
	for _, dsn := range []string{a, b} {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'`).Scan(&n); err != nil || n != 0 {
			t.Fatalf("fresh database has %d tables, %v", n, err)
		}
		if _, err := db.ExecContext(ctx, `CREATE TABLE t (x int)`); err != nil {
			t.Fatal(err)
		}
	}
}

// TestNoOrphan kills a test process that started a cluster, so that it
// never reaches Shutdown, and checks that the server dies with it.
func TestNoOrphan(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "1" {
		NewDatabase(t)
		fmt.Printf("dir=%s server-pid=%d\n", current.dir, current.cmd.Process.Pid)
		os.Stdout.Sync()
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {}
	}
	if _, err := binDir(); err != nil {
		NewDatabase(t) // skips or fails as documented
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoOrphan$")
	cmd.Env = append(os.Environ(), "PGTEST_CHILD=1")
	out, _ := cmd.Output()
	var dir string
	var pid int
	if _, err := fmt.Sscanf(strings.TrimSpace(string(out)), "dir=%s server-pid=%d", &dir, &pid); err != nil || !strings.Contains(dir, dirPrefix) {
		t.Fatalf("child output %q: no server pid", out)
	}
	deadline := time.Now().Add(30 * time.Second)
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("server %d outlived its test process", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	sweep(filepath.Dir(dir))
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the dead process's data directory %s is still there after sweep (%v)", dir, err)
	}
}

// recordTB records Skipf and Fatalf instead of stopping the test.
type recordTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recordTB) Helper() {}
func (r *recordTB) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, fmt.Sprintf(format, args...)
}
func (r *recordTB) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}

func TestMissingBinaries(t *testing.T) {
	for _, tc := range []struct {
		ci                  string
		wantSkip, wantFatal bool
	}{{"", true, false}, {"true", false, true}} {
		t.Setenv("CI", tc.ci)
		r := &recordTB{TB: t}
		missingBinaries(r, fmt.Errorf("no initdb"))
		if r.skipped != tc.wantSkip || r.failed != tc.wantFatal || !strings.Contains(r.msg, "apt-get install postgresql") {
			t.Errorf("CI=%q: skipped %v, failed %v, msg %q", tc.ci, r.skipped, r.failed, r.msg)
		}
	}
}

// TestRestart: a server of the test's own starts again on its data
// after a fast stop: a DSN it gave still reaches the data committed.
func TestRestart(t *testing.T) {
	s := NewServer(t)
	dsn := s.NewDatabase(t)
	ctx := context.Background()
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE t (x int); INSERT INTO t VALUES (7)`); err != nil {
		t.Fatal(err)
	}
	s.Restart(t)
	var x int
	// The pool's connection was ended: the first use may fail.
	if err := db.QueryRowContext(ctx, `SELECT x FROM t`).Scan(&x); err != nil {
		if err := db.QueryRowContext(ctx, `SELECT x FROM t`).Scan(&x); err != nil {
			t.Fatal(err)
		}
	}
	if x != 7 {
		t.Fatalf("x = %d after the restart, want 7", x)
	}
}
