package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHugeSchemaSkipped: a tool's inputSchema goes into every model
// request of every turn of the agents that mount its server, and the user
// pays for it in input tokens. A server listing a tool with a schema of
// hundreds of KB (a bug, or a hostile server) must not make each turn
// that much dearer, or too large for the model to take: like a tool with
// a bad name, it is skipped and logged, and the server's other tools stay.
func TestHugeSchemaSkipped(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "bloat", Version: "1"}, nil)
	ok := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "small", Description: "Small.", InputSchema: map[string]any{"type": "object"}}, ok)
	srv.AddTool(&sdk.Tool{Name: "bloated", Description: "Bloated.", InputSchema: map[string]any{"type": "object",
		"properties": map[string]any{"q": map[string]any{"type": "string", "description": strings.Repeat("pay for me ", 40_000)}}}}, ok)
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	s := mustServer(t, &Config{Name: "bloat", Prefix: "bloat", URL: ts.URL, Timeout: 5 * time.Second, MaxOutput: 4096}, Options{})
	names := toolNames(t, s)
	if strings.Join(names, ",") != "bloat__small" {
		t.Fatalf("tools = %v, want only bloat__small (a 440 KB schema offered to the model)", names)
	}
}
