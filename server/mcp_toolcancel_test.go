package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coachd/coachd"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// heldTool is an instant tool that signals started when it runs, then
// holds until its context ends, and signals stopped.
type heldTool struct{ started, stopped chan struct{} }

func (h heldTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "held", Description: "held", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (h heldTool) Execute(ctx context.Context, _ coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	close(h.started)
	<-ctx.Done()
	close(h.stopped)
	return coachd.ToolResult{}, ctx.Err()
}

// TestMCPToolCancelled: an instant tool called over /v1/mcp (a webhook,
// a pack's MCP server) stops when its client gives up on the call (a
// desktop client's cancel through coachd mcp, an HTTP client gone), as
// chat does. It ran on to its own timeout for an answer nobody would
// read, doing what the user had cancelled.
func TestMCPToolCancelled(t *testing.T) {
	h := heldTool{started: make(chan struct{}), stopped: make(chan struct{})}
	e := MustChatEnv(t, nil, h)
	ctx := context.Background()
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		HTTPClient: &http.Client{Transport: keyTransport(e.alice.key)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "held", Arguments: map[string]any{}})
		done <- err
	}()
	<-h.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case <-h.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("the tool ran on after its client gave up")
	}
}
