package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestMCPBadLine: `coachd mcp` answers a line that is not JSON with a
// JSON-RPC parse error (-32700, id null) and answers the next request;
// it ended (exit 1) with no answer. coachd is not up: the bridge answers
// initialize meanwhile.
func TestMCPBadLine(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String()
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		done <- runMCP(ctx, []string{"--url", url}, getenvFrom(map[string]string{"COACHD_KEY": "ck_x"}), inR, outW, &stderr)
		outW.Close()
	}()
	go io.WriteString(inW, "not json\n"+`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`+"\n")
	lines := bufio.NewScanner(outR)
	var got []string
	for len(got) < 2 && lines.Scan() {
		got = append(got, lines.Text())
	}
	all := strings.Join(got, "\n")
	if !strings.Contains(all, `"code":-32700`) || !strings.Contains(all, `"id":null`) || !strings.Contains(all, `"protocolVersion"`) {
		t.Fatalf("answers = %s (stderr %s); want a parse error with id null, then initialize's", all, stderr.String())
	}
	inW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("coachd mcp at the end of its input: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("coachd mcp did not end at the end of its input")
	}
}
