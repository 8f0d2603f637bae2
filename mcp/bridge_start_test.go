package mcp

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeStartsBeforeCoachd: a desktop client launches `coachd mcp`
// at its own start, before coachd is up. The bridge answers initialize
// and tools/list meanwhile, answers a call with an error saying coachd
// is not reachable at its URL (not that it may have run), and once
// coachd answers, its tools reach the client with
// notifications/tools/list_changed and run. It exited before it
// answered initialize: the client had to be restarted by hand.
func TestBridgeStartsBeforeCoachd(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // coachd is not there yet
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ct, st := sdk.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- Bridge(ctx, "http://"+addr+"/v1/mcp", "ck_key", st, nil, nil) }()
	changed := make(chan struct{}, 10)
	client := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, &sdk.ClientOptions{
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { changed <- struct{}{} }})
	type connected struct {
		sess *sdk.ClientSession
		err  error
	}
	conn := make(chan connected, 1)
	go func() {
		sess, err := client.Connect(ctx, ct, nil)
		conn <- connected{sess, err}
	}()
	var sess *sdk.ClientSession
	select {
	case err := <-done: // the bridge ended: nothing answers initialize
		t.Fatalf("coachd mcp ended with coachd not up yet: %v", err)
	case c := <-conn:
		if c.err != nil {
			t.Fatalf("initialize with coachd not up yet: %v", c.err)
		}
		sess = c.sess
	}
	defer func() { sess.Close(); cancel(); <-done }()
	if caps := sess.InitializeResult().Capabilities; caps.Tools == nil || !caps.Tools.ListChanged {
		t.Fatalf("capabilities = %+v; want tools with listChanged", caps)
	}
	if _, err := sess.ListTools(ctx, nil); err != nil {
		t.Fatalf("tools/list with coachd not up yet: %v", err)
	}
	var runs atomic.Int32
	_, err = sess.CallTool(ctx, &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
	if err == nil || !strings.Contains(err.Error(), "not reachable at http://"+addr) || strings.Contains(err.Error(), "may have run") {
		t.Fatalf("call with coachd not up yet: %v; want that coachd is not reachable at its URL", err)
	}

	l, err = net.Listen("tcp", addr) // coachd starts
	if err != nil {
		t.Skipf("the address was taken meanwhile: %v", err)
	}
	up := &httptest.Server{Listener: l, Config: &http.Server{Handler: chargeHandler(&runs)}}
	up.Start()
	defer up.Close()
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

// TestBridgeWrongKeyAtStart: a key coachd refuses ends `coachd mcp` at
// once, saying so; it does not wait for a coachd that is there.
func TestBridgeWrongKeyAtStart(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":"unauthorized","message":"invalid API key"}}`)
	}))
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, st := sdk.NewInMemoryTransports()
	err := Bridge(ctx, ts.URL, "ck_wrong", st, nil, nil)
	if err == nil || ctx.Err() != nil || !strings.Contains(err.Error(), "invalid API key") {
		t.Fatalf("Bridge with a wrong key = %v (ctx %v); want coachd's refusal at once", err, ctx.Err())
	}
}
