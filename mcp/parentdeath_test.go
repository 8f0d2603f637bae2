package mcp

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"
)

// lineEnv, set to an address, makes the fake stdio server connect to it
// at start and hold the connection while it lives: its end tells the
// test that the process is gone.
const lineEnv = "COACHD_MCP_FAKE_LINE"

// held keeps the fake server's connection from the collector.
var held net.Conn

func holdLine() {
	if addr := os.Getenv(lineEnv); addr != "" {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake server:", err)
			os.Exit(1)
		}
		held = c
	}
}

// coachdLike is a coachd in miniature: it starts a stdio server that
// stops reading its stdin once it has listed its tools (busy or hung:
// stdin's end would not stop it), says so, and waits to be killed.
func coachdLike() {
	cfg := &Config{Name: "fake", Prefix: "fake", Command: os.Args[0], Dir: os.TempDir(),
		Env:     map[string]string{fakeEnv: "stdio", deafEnv: "1", lineEnv: os.Getenv(lineEnv)},
		Timeout: 20 * time.Second, MaxOutput: 4096}
	s := NewServer(cfg, Options{StartWait: 20 * time.Second})
	if _, err := s.Tools(context.Background()); err != nil {
		fmt.Println("tools:", err)
		os.Exit(1)
	}
	fmt.Println("ready")
	select {}
}

// TestStdioServerStopsWithCoachd: a stdio server runs in a process group
// of its own (so that Close can stop npx's node), which no signal to
// coachd's group reaches. A coachd killed with SIGKILL, which cannot
// close anything, left a server that did not read its stdin running for
// good.
func TestStdioServerStopsWithCoachd(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), fakeEnv+"=parent", lineEnv+"="+ln.Addr().String())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("coachd-like process: %q, %v", line, err)
	}
	ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	// The server ends the connection when it dies; read blocks until then.
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Read(make([]byte, 1)); err == nil || os.IsTimeout(err) {
		t.Fatalf("the stdio server still runs 10 s after coachd was killed: read = %v", err)
	}
}
