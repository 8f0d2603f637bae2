package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestBridgeRefused: a call coachd refuses before reading it (the user's
// key revoked meanwhile: 401 with the API's JSON error body) did not
// run: its error says why, in coachd's words, and not that the call may
// have run. It said "the connection to coachd broke after the call was
// sent: it may have run … Unauthorized".
func TestBridgeRefused(t *testing.T) {
	var runs, revoked atomic.Int32
	h := chargeHandler(&runs)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if revoked.Load() == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"error":{"code":"unauthorized","message":"invalid API key"}}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()
	sess := bridgeSession(t, ts.URL)
	revoked.Store(1)
	_, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
	if err == nil || strings.Contains(err.Error(), "may have run") || !strings.Contains(err.Error(), "invalid API key") || runs.Load() != 0 {
		t.Fatalf("call refused with 401: %v (runs %d); want coachd's reason, not that it may have run", err, runs.Load())
	}
	revoked.Store(0)
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "charge", Arguments: map[string]any{}})
	if err != nil || res.IsError || runs.Load() != 1 {
		t.Fatalf("call once the key is good again: %+v %v (runs %d)", res, err, runs.Load())
	}
}
