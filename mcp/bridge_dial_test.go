package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeDialHoldsNoLock: while `coachd mcp` reconnects to a coachd
// that does not answer, a call whose client gave up returns at once, and
// the bridge can shut down: the reconnect holds no lock they wait on.
func TestBridgeDialHoldsNoLock(t *testing.T) {
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select { // coachd hangs on the reconnect
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer ts.Close()
	defer close(release)
	r := &remote{endpoint: ts.URL, hc: ts.Client()}
	dialCtx, stopDial := context.WithCancel(context.Background())
	defer stopDial()
	go r.session(dialCtx)
	<-arrived

	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client gave up on this call
	go func() {
		_, err := r.call(ctx, &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a call with no connection succeeded")
		}
	case <-time.After(10 * time.Second): // a bound on failure, not a pace
		t.Fatal("a given-up call waited behind the reconnect")
	}
	closed := make(chan struct{})
	go func() { r.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("close waited behind the reconnect")
	}
}
