package mcp

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestStdioBatch: a JSON-RPC batch from a desktop client that asked for
// protocol 2025-06-18 (which removed batches) is answered with an
// invalid request error, and the next request is answered; under
// 2025-03-26 a batch is still answered as a batch. `coachd mcp` ended
// on such a batch with no answer: the SDK's transport fails the
// connection on it.
func TestStdioBatch(t *testing.T) {
	for _, c := range []struct {
		version string
		want    []string
	}{
		{"2025-06-18", []string{`"id":null`, `"code":-32600`, "2025-06-18"}},
		{"2025-03-26", []string{`[{"jsonrpc":"2.0","id":2,"result":{}}]`}},
	} {
		t.Run(c.version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			inW, lines, done := runStdio(ctx, sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, nil), sdk.DefaultMaxLineLength)
			send := func(line string) string {
				t.Helper()
				go io.WriteString(inW, line+"\n")
				if !lines.Scan() {
					select {
					case err := <-done:
						t.Fatalf("after %.60q the server ended: %v", line, err)
					case <-ctx.Done():
					}
					t.Fatalf("after %.60q: no answer: %v", line, lines.Err())
				}
				return lines.Text()
			}
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + c.version + `","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`)
			go io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
			got := send(`[{"jsonrpc":"2.0","id":2,"method":"ping"}]`)
			for _, want := range c.want {
				if !strings.Contains(got, want) {
					t.Fatalf("answer to a batch = %s; want %s in it", got, want)
				}
			}
			if got := send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
				t.Fatalf("ping after the batch = %s", got)
			}
			inW.Close()
			select {
			case <-done:
			case <-ctx.Done():
				t.Fatal("the server did not end at the end of its input")
			}
		})
	}
}
