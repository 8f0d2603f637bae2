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

// TestSecurityURLSecretEchoed: a hosted MCP server's key is often in its
// URL (`url: ${CRM_URL}/mcp/${CRM_KEY}` or `?key=`). Errors quoting the
// whole URL were shown as its origin, but a server that quotes the key
// alone, in a result or a refused request's JSON-RPC error ("key … is
// suspended"), handed it to the model, the session, the user's stream
// and the logs. The server's address (${CRM_URL}) still shows.
func TestSecurityURLSecretEchoed(t *testing.T) {
	const key, token = "crm_path_key_8a7b6c", "crm_query_tok_1f2e3d"
	srv := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "1"}, nil)
	var path atomic.Value
	srv.AddTool(&sdk.Tool{Name: "whoami", Description: "Who the server thinks we are.", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "you called " + path.Load().(string) + ", plan gold"}}}, nil
		})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var reject atomic.Bool
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path.Store(r.URL.RequestURI())
		if reject.Load() {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"key %s suspended (token %s), plan gold"}}`,
				strings.TrimPrefix(r.URL.Path, "/mcp/"), r.URL.Query().Get("token"))
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close) // after the clients close their event streams
	vars := map[string]string{"CRM_URL": ts.URL, "CRM_KEY": key, "CRM_TOKEN": token}
	cfg, err := ParseConfig("mcp/crm.yaml", []byte("name: crm\nurl: ${CRM_URL}/mcp/${CRM_KEY}?token=${CRM_TOKEN}\n"),
		func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Timeout = 5 * time.Second
	var logs syncbuf.Buffer
	opts := Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}}
	s := mustServer(t, cfg, opts)
	whoami := mustTool(t, s, "crm__whoami")
	shown := []string{call(t, whoami, `{}`).Content}
	reject.Store(true)
	res := call(t, whoami, `{}`)
	if !res.IsError {
		t.Fatalf("a refused call succeeded: %+v", res)
	}
	shown = append(shown, res.Content)
	fresh := mustServer(t, cfg, opts)
	if _, err := fresh.Tools(context.Background()); err == nil {
		t.Fatal("a refused start listed tools")
	} else {
		shown = append(shown, err.Error())
	}
	for i, text := range append(shown, logs.String()) {
		for _, secret := range []string{key, token} {
			if strings.Contains(text, secret) {
				t.Errorf("text %d shows the URL's secret %s: %s", i, secret, text)
			}
		}
	}
	for i, text := range shown {
		if !strings.Contains(text, "plan gold") {
			t.Errorf("text %d lost the rest of the answer: %s", i, text)
		}
	}
}
