package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioBadLines: a desktop client's malformed line (not JSON, JSON
// that is not a JSON-RPC message, a line over the frame limit) is
// answered with a JSON-RPC error, id null, and the server reads on: the
// next request is answered. The SDK's stdio transport ended the
// connection on the first such line, with no answer: `coachd mcp`
// exited 1.
func TestStdioBadLines(t *testing.T) {
	const limit = 1 << 10
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	inW, lines, done := runStdio(ctx, sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, nil), limit)
	lines.Buffer(nil, 1<<20)
	type answer struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) answer {
		t.Helper()
		go io.WriteString(inW, line+"\n")
		if !lines.Scan() {
			select {
			case err := <-done:
				t.Fatalf("after %.40q the server ended: %v", line, err)
			default:
			}
			t.Fatalf("after %.40q: no answer: %v", line, lines.Err())
		}
		var a answer
		if err := json.Unmarshal(lines.Bytes(), &a); err != nil {
			t.Fatalf("answer %s: %v", lines.Bytes(), err)
		}
		return a
	}
	a := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	if a.Error != nil {
		t.Fatalf("initialize: %+v", a.Error)
	}
	go io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	for _, c := range []struct {
		line string
		code int
		id   string
	}{
		{`not json`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":2,"method":`, -32700, "null"},
		{`{"id":3,"method":"ping"}`, -32600, "3"}, // no "jsonrpc":"2.0"
		{`[]`, -32600, "null"},
		{`{"jsonrpc":"2.0","id":4,"method":"ping","x":"` + strings.Repeat("a", 2*limit) + `"}`, -32700, "null"},
		{`{"jsonrpc":"2.0","id":5,"method":"ping","x":"` + strings.Repeat("a", 200<<10) + `"}`, -32700, "null"},
	} {
		a := send(c.line)
		if a.Error == nil || a.Error.Code != c.code || string(a.ID) != c.id {
			t.Fatalf("answer to %.40q = id %s error %+v; want code %d, id %s", c.line, a.ID, a.Error, c.code, c.id)
		}
		if a := send(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); a.Error != nil || string(a.ID) != "9" {
			t.Fatalf("ping after %.40q = id %s error %+v", c.line, a.ID, a.Error)
		}
	}
	inW.Close()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("the server did not end at the end of its input")
	}
}

// runStdio runs srv over the stdio filter (limit: its line bound) on
// pipes: what is written to in reaches it, its lines come out of out,
// and done has Run's error once it ended (out is closed then).
func runStdio(ctx context.Context, srv *sdk.Server, limit int) (in *io.PipeWriter, out *bufio.Scanner, done <-chan error) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := make(chan error, 1)
	go func() {
		c <- srv.Run(ctx, stdioTransport(inR, outW, limit))
		outW.Close()
	}()
	return inW, bufio.NewScanner(outR), c
}
