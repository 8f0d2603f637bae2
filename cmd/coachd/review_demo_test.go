package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReviewNeedsModel: without ANTHROPIC_API_KEY (nor another provider)
// coachd review and coachd autobuild would run the offline demo model as
// the validator coach, which has no rules for validate_implementation and
// record_decision: the user got a contract violation naming tools they
// never heard of. They are refused up front, saying what to set.
func TestReviewNeedsModel(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "slug.go", "slug_test.go"} {
		b, err := os.ReadFile(filepath.Join(autobuildDir, "sample", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(ws, f), b, 0o600)
	}
	if err := os.MkdirAll(filepath.Join(dir, "scratch"), 0o700); err != nil {
		t.Fatal(err)
	}
	env := getenvFrom(map[string]string{"COACHD_DB": filepath.Join(dir, "coachd.db"), "COACHD_SCRATCH": filepath.Join(dir, "scratch")})
	reqs := filepath.Join(autobuildDir, "sample", "REQUIREMENTS.md")
	for _, cmd := range [][]string{
		{"coachd", "review", "--requirements", reqs, "--workspace", ws},
		{"coachd", "autobuild", "--requirements", reqs, "--workspace", ws, "--max-turns", "1"},
		{"coachd", "review", "--provider", "demo", "--requirements", reqs, "--workspace", ws},
	} {
		out, errOut := &syncBuffer{}, &syncBuffer{}
		err := run(context.Background(), cmd, env, out, errOut)
		if !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "demo model cannot") || !strings.Contains(errOut.String(), "ANTHROPIC_API_KEY") {
			t.Errorf("%s: err %v\nstdout %s\nstderr %s", strings.Join(cmd[1:], " "), err, out, errOut)
		}
	}
}

// TestServeReviewsNeedModel: serve --workspaces with a pack whose coach
// runs on the demo model answered every POST /v1/reviews with a 502
// contract_violation; it is refused at start, as --workspaces without a
// pack is.
func TestServeReviewsNeedModel(t *testing.T) {
	ws := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	errOut := &syncBuffer{}
	done, listening := make(chan error, 1), make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if listeningRe.MatchString(sc.Text()) {
				close(listening)
			}
		}
	}()
	go func() {
		err := run(ctx, []string{"coachd", "serve", "--db", filepath.Join(t.TempDir(), "c.db"), "--addr", "127.0.0.1:0",
			"--pack", autobuildDir, "--workspaces", ws}, getenvFrom(nil), pw, errOut)
		pw.Close()
		done <- err
	}()
	var err error
	select {
	case err = <-done:
	case <-listening:
		cancel()
		<-done
		t.Fatalf("serve started reviews on the demo model:\n%s", errOut)
	}
	if !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "demo model cannot review") {
		t.Fatalf("err %v\nstderr %s", err, errOut)
	}
}
