package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadOnlyDatabaseRefused: a SQLite file the process may not write (a
// restored backup left 0444, a volume mounted read-only) was served as if
// nothing were wrong: /healthz and /readyz said ok and every turn failed
// with a 500. serve and migrate now refuse it at start, saying so. Run as
// root (whom a file's mode does not stop), the binary runs as nobody.
func TestReadOnlyDatabaseRefused(t *testing.T) {
	dir, err := os.MkdirTemp("", "coachd-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	db := filepath.Join(dir, "coachd.db")
	var out, errOut syncBuffer
	if err := run(context.Background(), []string{"coachd", "migrate", "--db", db}, getenvFrom(nil), &out, &errOut); err != nil {
		t.Fatalf("migrate: %v\n%s", err, errOut.String())
	}
	bin := filepath.Join(dir, "coachd")
	mustCopy(t, MustBinary(t), bin, 0o755)
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		const nobody = 65534
		for _, p := range []string{dir, db} {
			if err := os.Chown(p, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
		os.Chmod(dir, 0o755)
		cred = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	for _, args := range [][]string{{"migrate", "--db", db}, {"serve", "--db", db, "--addr", "127.0.0.1:0"}} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		var stderr syncBuffer
		cmd.Stderr = &stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// serve prints its listening line once it serves: it must never.
		b := make([]byte, 4096)
		n, _ := stdout.Read(b)
		if strings.Contains(string(b[:n]), "listening") {
			cmd.Process.Kill()
		}
		err = cmd.Wait()
		cancel()
		if err == nil || !strings.Contains(string(b[:n])+stderr.String(), "read-only") {
			t.Errorf("%s on a read-only file: %v\nstdout %s\nstderr %s", args[0], err, b[:n], stderr.String())
		}
	}
}

func mustCopy(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}
