package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coachd/coachd/internal/syncbuf"
)

// TestSecurityServerErrorTextBounded: an MCP server's refusal (a
// JSON-RPC error, read up to 16 MiB) was logged whole with each failed
// call or listing, and the text the model and the user's stream read kept
// its control characters (a terminal escape, a line break).
func TestSecurityServerErrorTextBounded(t *testing.T) {
	long := "tool failed\x1b[31m\nforged=1 " + strings.Repeat("é", 50000)
	var fail, reject atomic.Bool
	srv := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	srv.AddTool(&sdk.Tool{Name: "whoami", Description: "Who.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if fail.Load() {
				return nil, errors.New(long)
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if reject.Load() {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":%q}}`, long)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the clients close their event streams
	cfg, err := ParseConfig("mcp/crm.yaml", []byte("name: crm\nurl: "+ts.URL+"/mcp\n"), func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	var logs syncbuf.Buffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}}
	s := mustServer(t, cfg, opts)
	whoami := mustTool(t, s, "crm__whoami")
	fail.Store(true)
	before := len(logs.String())
	res := call(t, whoami, `{}`)
	if !res.IsError || len(res.Content) > 500 || strings.ContainsFunc(res.Content, unicode.IsControl) || !strings.Contains(res.Content, "tool failed") {
		t.Errorf("result is not an error of short clean text that says what failed (%d bytes): %.300q", len(res.Content), res.Content)
	}
	reject.Store(true)
	fresh := mustServer(t, cfg, opts)
	if _, err := fresh.Tools(context.Background()); err == nil {
		t.Fatal("a refused start listed tools")
	} else if len(err.Error()) > 2000 || strings.ContainsFunc(err.Error(), unicode.IsControl) {
		t.Errorf("listing error is not short clean text (%d bytes): %.300q", len(err.Error()), err.Error())
	}
	for _, line := range strings.Split(logs.String()[before:], "\n") {
		if len(line) > 2000 {
			t.Errorf("a log line of %d bytes: %.300s", len(line), line)
		}
	}
}
