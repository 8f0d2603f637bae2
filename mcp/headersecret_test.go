package mcp

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coachd/coachd/internal/syncbuf"
)

// TestSecurityHeaderSecretNotShown: an HTTP MCP server's headers carry
// its credential (`Authorization: Bearer ${CRM_TOKEN}`). A server that
// quotes what it was sent ("invalid token …", a whoami tool), in a result,
// an isError result or a refused request's JSON-RPC error, handed the
// token to the model, the session, the user's stream and the logs: unlike
// a webhook's header values, an MCP server's were not hidden.
func TestSecurityHeaderSecretNotShown(t *testing.T) {
	const token = "crm_tok_5e4d3c2b1a"
	srv := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	quote := func(isErr bool, format string) sdk.ToolHandler {
		return func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			text := fmt.Sprintf(format, req.Extra.Header.Get("Authorization"))
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isErr}, nil
		}
	}
	schema := map[string]any{"type": "object"}
	srv.AddTool(&sdk.Tool{Name: "whoami", Description: "Who the server thinks we are.", InputSchema: schema}, quote(false, "you sent %q, plan gold"))
	srv.AddTool(&sdk.Tool{Name: "refund", Description: "Refund.", InputSchema: schema}, quote(true, "not allowed for %s, plan gold"))
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var reject atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reject.Load() {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"token %s expired, plan gold"}}`, r.Header.Get("Authorization"))
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the clients close their event streams
	vars := map[string]string{"CRM_URL": ts.URL + "/mcp", "CRM_TOKEN": token}
	cfg, err := ParseConfig("mcp/crm.yaml", []byte("name: crm\nurl: ${CRM_URL}\nheaders:\n  Authorization: Bearer ${CRM_TOKEN}\n"),
		func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	var logs syncbuf.Buffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}}
	s := mustServer(t, cfg, opts)
	whoami, refund := mustTool(t, s, "crm__whoami"), mustTool(t, s, "crm__refund")
	shown := []string{call(t, whoami, `{}`).Content, call(t, refund, `{}`).Content}
	reject.Store(true)
	res := call(t, whoami, `{}`)
	if !res.IsError {
		t.Fatalf("a refused call succeeded: %+v", res)
	}
	shown = append(shown, res.Content)
	// A server that refuses the start: its listing's error.
	fresh := mustServer(t, cfg, opts)
	if _, err := fresh.Tools(context.Background()); err == nil {
		t.Fatal("a refused start listed tools")
	} else {
		shown = append(shown, err.Error())
	}
	for i, text := range append(shown, logs.String()) {
		if strings.Contains(text, token) || strings.Contains(text, "5e4d3c2b") {
			t.Errorf("text %d shows the header's secret: %s", i, text)
		}
	}
	for i, text := range shown {
		if !strings.Contains(text, "plan gold") {
			t.Errorf("text %d lost the rest of the answer: %s", i, text)
		}
	}
}
