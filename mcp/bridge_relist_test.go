package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeRelists: coachd's tool list for an agent changes while
// `coachd mcp` runs (a pack MCP server that was slow to start joins it,
// one that stops leaves it). The bridge asks coachd again when its client
// lists tools, and a change reaches the client as
// notifications/tools/list_changed.
func TestBridgeRelists(t *testing.T) {
	remote := sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, nil)
	handler := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	remote.AddTool(&sdk.Tool{Name: "save_note", InputSchema: map[string]any{"type": "object"}}, handler)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return remote },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Bridge(ctx, ts.URL, "ck_key", st, nil, nil) }()
	changed := make(chan struct{}, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	sess, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { sess.Close(); cancel(); <-done }()
	names := func() []string {
		t.Helper()
		res, err := sess.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range res.Tools {
			out = append(out, tool.Name)
		}
		slices.Sort(out)
		return out
	}
	if got := names(); !slices.Equal(got, []string{"save_note"}) {
		t.Fatalf("tools at start = %v", got)
	}
	remote.AddTool(&sdk.Tool{Name: "crm__lookup", InputSchema: map[string]any{"type": "object"}}, handler)
	remote.RemoveTools("save_note")
	if got := names(); !slices.Equal(got, []string{"crm__lookup"}) {
		t.Fatalf("tools after coachd's list changed = %v, want [crm__lookup]", got)
	}
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed")
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "crm__lookup", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("call the new tool: %+v, %v", res, err)
	}
}
