package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/coachd/coachd/internal/syncbuf"
)

// TestURLSecretNotShown: hosted MCP servers often take their key in the
// URL (a path segment or ?token=, from ${ENV}). When the server cannot be
// reached, the HTTP client's error quotes the URL: the result the model
// reads (and the client is streamed), the list error and the log must not
// carry the key.
func TestURLSecretNotShown(t *testing.T) {
	const secret = "s3cret-key-123"
	srv := fakeServer()
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	var logs syncbuf.Buffer
	cfg := &Config{Name: "remote", Prefix: "fake", URL: ts.URL + "/mcp/" + secret + "?token=" + secret,
		Timeout: 3 * time.Second, MaxOutput: 4096}
	s := mustServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Backoff: Backoff{Base: time.Millisecond, Max: time.Millisecond}})
	echo := mustTool(t, s, "fake__echo")
	ts.CloseClientConnections() // the server goes away (its event stream too)
	ts.Close()
	var shown []string
	for range 3 {
		res := call(t, echo, `{"text":"x"}`)
		if !res.IsError {
			t.Fatalf("a call to a server that is gone succeeded: %+v", res)
		}
		shown = append(shown, res.Content)
	}
	s.mu.Lock()
	s.tools = nil // list again
	s.mu.Unlock()
	if _, err := s.Tools(context.Background()); err != nil {
		shown = append(shown, err.Error())
	}
	for _, text := range append(shown, logs.String()) {
		if strings.Contains(text, secret) {
			t.Errorf("the URL's secret is shown: %s", text)
		}
	}
}
