package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeRedirectKeepsKey: `coachd mcp` adds the user's key to every
// request it makes to --url. A redirect to another host (an SSO proxy in
// front of coachd, a moved server) must not carry the key there: Go
// drops Authorization on such a redirect, but a header added by the
// transport is added again at every hop.
func TestBridgeRedirectKeepsKey(t *testing.T) {
	const key = "ck_secret_user_key"
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		http.NotFound(w, r)
	}))
	defer other.Close()
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) // another host
	coach := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere+"/mcp", http.StatusTemporaryRedirect)
	}))
	defer coach.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, server := sdk.NewInMemoryTransports()
	if err := Bridge(ctx, coach.URL+"/v1/mcp", key, server, nil, nil); err == nil {
		t.Fatal("the bridge started through a redirect to another host")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		if strings.Contains(h, key) {
			t.Fatalf("the user's key went to another host: Authorization %q", h)
		}
	}
}
