package mcp

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// spawnEnv, set, gives the fake stdio server a spawn tool.
const spawnEnv = "COACHD_MCP_FAKE_SPAWN"

// spawnOrphan starts a helper as `npx` starts the real server: a child
// that shares the server's stderr, ignores SIGTERM and never reads
// stdin. It holds every connection to its address until it dies.
func spawnOrphan() (string, bool) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeEnv+"=orphan")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err.Error(), true
	}
	if err := cmd.Start(); err != nil {
		return err.Error(), true
	}
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return err.Error(), true
	}
	return addr[:len(addr)-1], false
}

// orphan is the helper's main.
func orphan() {
	signal.Ignore(syscall.SIGTERM)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(1)
	}
	fmt.Println(ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			os.Exit(1)
		}
		defer c.Close()
	}
}

// TestStdioServerChildrenStopped: a stdio server often runs as a
// launcher and its child (npx, a shell script, uv). Stopping the server
// must stop the child too: it was left running, holding the server's
// stderr, so that Close waited out every grace period and failed, and
// the child (and a goroutine waiting on it) lived on for good.
func TestStdioServerChildrenStopped(t *testing.T) {
	cfg := stdioConfig(t)
	cfg.Env[spawnEnv] = "1"
	s := mustServer(t, cfg, Options{})
	res := call(t, mustTool(t, s, "fake__spawn"), `{}`)
	if res.IsError {
		t.Fatalf("spawn: %+v", res)
	}
	conn, err := net.Dial("tcp", res.Content)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := s.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	// The helper ends the connection when it dies; read blocks until then.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
		t.Fatalf("the server's child still runs after Close: read = %v", err)
	}
}
