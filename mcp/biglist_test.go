package mcp

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolListBounded: every tool a server lists goes into every model
// request of the turns that offer it. Each schema is bounded (32 KiB), but
// a server (buggy or hostile) listing 200 tools just under that bound
// would add megabytes to each request: more than the model takes, so every
// turn of the agent would fail. A server's tools are bounded as a whole:
// the first ones up to the bound are kept, the rest skipped and logged.
func TestToolListBounded(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "bloat", Version: "1"}, nil)
	ok := func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "ok"}}}, nil
	}
	for i := range 40 {
		srv.AddTool(&sdk.Tool{Name: fmt.Sprintf("t%02d", i), Description: strings.Repeat("d", 1900), InputSchema: map[string]any{"type": "object",
			"properties": map[string]any{"q": map[string]any{"type": "string", "description": strings.Repeat("pay for me ", 2800)}}}}, ok)
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)
	s := mustServer(t, &Config{Name: "bloat", Prefix: "bloat", URL: ts.URL, Timeout: 5 * time.Second, MaxOutput: 4096}, Options{})
	list, err := s.Tools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, tool := range list {
		def := tool.Definition()
		total += len(def.InputSchema) + len(def.Description)
	}
	if len(list) == 0 || total > maxListBytes {
		t.Fatalf("%d tools, %d bytes of schemas and descriptions: want some, at most %d", len(list), total, maxListBytes)
	}
}
