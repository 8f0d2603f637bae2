package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPWaitLogged: `coachd mcp` started before coachd (or pointed at
// the wrong URL) says on stderr, which a desktop client keeps as the
// server's log, that coachd is not reachable at its URL and that it
// waits, and says so again once coachd answers. It said nothing: a user
// whose client showed no coachd tools found an empty log.
func TestMCPWaitLogged(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	key := mustCreateRichUser(t, dbPath, "ada")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // coachd is not up yet
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	defer inW.Close()
	errR, errW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- runMCP(ctx, []string{"--url", "http://" + addr}, getenvFrom(map[string]string{"COACHD_KEY": key}), inR, io.Discard, errW)
		errW.Close()
	}()
	logged := make(chan string)
	go func() {
		sc := bufio.NewScanner(errR)
		for sc.Scan() {
			select {
			case logged <- sc.Text():
			case <-ctx.Done():
			}
		}
		close(logged)
	}()
	next := func(what string) string {
		t.Helper()
		select {
		case line, ok := <-logged:
			if !ok {
				t.Fatalf("coachd mcp ended (%v) before it logged %s", <-done, what)
			}
			return line
		case <-ctx.Done():
			t.Fatalf("coachd mcp logged nothing: want %s", what)
		}
		return ""
	}
	if line := next("that coachd is not reachable"); !strings.Contains(line, "not reachable") || !strings.Contains(line, addr) {
		t.Fatalf("stderr = %q; want that coachd is not reachable at %s", line, addr)
	}
	if l, err := net.Listen("tcp", addr); err != nil {
		t.Skipf("the address was taken meanwhile: %v", err)
	} else {
		l.Close()
	}
	MustServe(t, map[string]string{"COACHD_DB": dbPath}, "--addr", addr)
	if line := next("that coachd answered"); !strings.Contains(line, "reached coachd") || !strings.Contains(line, addr) {
		t.Fatalf("stderr = %q; want that coachd answered at %s", line, addr)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("coachd mcp: %v", err)
	}
}
