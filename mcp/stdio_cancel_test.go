package mcp

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioCancelledUnanswered: a call the desktop client cancels
// (notifications/cancelled) stops and gets no response, as the MCP spec
// asks of a receiver of a cancellation; the client's other requests are
// answered. `coachd mcp` answered the cancelled call with an error.
func TestStdioCancelledUnanswered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	started, stopped := make(chan struct{}), make(chan struct{})
	srv := sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "held", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			close(started)
			<-ctx.Done()
			close(stopped)
			return nil, ctx.Err()
		})
	inW, lines, done := runStdio(ctx, srv, sdk.DefaultMaxLineLength)
	write := func(line string) {
		t.Helper()
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	var ids []string
	read := make(chan struct{})
	go func() {
		defer close(read)
		for lines.Scan() {
			var a struct{ ID json.RawMessage }
			json.Unmarshal(lines.Bytes(), &a)
			ids = append(ids, string(a.ID))
		}
	}()
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"held","arguments":{}}}`)
	<-started
	write(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2,"reason":"the user stopped it"}}`)
	select {
	case <-stopped:
	case <-ctx.Done():
		t.Fatal("the cancelled call ran on")
	}
	write(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	inW.Close() // every request read before this is answered first
	<-read
	if <-done; ctx.Err() != nil {
		t.Fatal("the server did not end at the end of its input")
	}
	if got := strings.Join(ids, ","); got != "1,3" {
		t.Fatalf("answered ids %s; want 1,3: no answer to the cancelled call 2", got)
	}
}
