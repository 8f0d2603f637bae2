package mcp

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestBackoffLongerThanContext: a turn lists its servers' tools within
// 15 s and goes on without a server that cannot answer. A server in a
// backoff that outlasts the caller's time must be left out at once, not
// after the caller's whole time was waited for nothing: with a server
// down, every turn of its agents started that much later.
func TestBackoffLongerThanContext(t *testing.T) {
	cfg := stdioConfig(t)
	cfg.Command = "./no-such-server"
	s := mustServer(t, cfg, Options{Backoff: Backoff{Base: time.Minute, Max: time.Minute}})
	if _, err := s.Tools(context.Background()); err == nil {
		t.Fatal("a missing command started")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err := s.Tools(ctx)
	if err == nil || !strings.Contains(err.Error(), "restarting") {
		t.Fatalf("within the backoff: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("waited %s for a backoff that outlasts the caller's 10s", d.Round(time.Millisecond))
	}
}
