package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeStartsBehindProxy: coachd behind a reverse proxy (caddy) is
// not up yet: the proxy answers 502. `coachd mcp` waits for it as for a
// coachd that does not listen; it ended at once on "Bad Gateway".
func TestBridgeStartsBehindProxy(t *testing.T) {
	var up atomic.Bool
	var runs atomic.Int32
	h := chargeHandler(&runs)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Bridge(ctx, ts.URL, "ck_key", st, nil, nil) }()
	changed := make(chan struct{}, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	conn := make(chan *sdk.ClientSession, 1)
	go func() {
		sess, _ := client.Connect(ctx, ct, nil)
		conn <- sess
	}()
	var sess *sdk.ClientSession
	select {
	case err := <-done:
		t.Fatalf("coachd mcp ended behind a proxy answering 502: %v", err)
	case sess = <-conn:
		if sess == nil {
			t.Fatal("initialize failed")
		}
	}
	defer func() { sess.Close(); cancel(); <-done }()
	up.Store(true)
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no notifications/tools/list_changed once coachd answers")
	}
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
	if err != nil || res.IsError || runs.Load() != 1 {
		t.Fatalf("call once coachd is up: %+v %v (runs %d)", res, err, runs.Load())
	}
}
