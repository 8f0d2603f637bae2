package anthropic_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// fixturesDir holds the recorded Anthropic streams (copied from the
// project's shared fixtures, with their INDEX.md) so a fresh clone runs
// every conformance test.
func fixturesDir(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join("testdata", "fixtures")
	if _, err := os.Stat(dir); err != nil {
		tb.Fatalf("fixtures: %v", err)
	}
	return dir
}

// MustServer starts a fake that is closed with the test.
func MustServer(tb testing.TB) *anthropictest.Server {
	tb.Helper()
	srv := anthropictest.NewServer()
	tb.Cleanup(srv.Close)
	return srv
}

// eachPath runs f in a subtest for each way Model.Stream sends a call
// (model.go): the SDK's streaming method, as when its span follows the
// call, and a plain Post, as when nothing traces it (coachd serve
// without --otlp-endpoint). f sets Config.Untraced from untraced.
func eachPath(t *testing.T, f func(t *testing.T, untraced bool)) {
	for _, p := range [...]struct {
		name     string
		untraced bool
	}{{"SDKStream", false}, {"Post", true}} {
		t.Run(p.name, func(t *testing.T) { f(t, p.untraced) })
	}
}

// newModel returns the adapter pointed at srv; retries off unless cfg says.
func newModel(srv *anthropictest.Server, cfg anthropic.Config) *anthropic.Model {
	cfg.BaseURL = srv.URL()
	if cfg.APIKey == "" {
		cfg.APIKey = "test-key"
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1
	}
	return anthropic.New(cfg)
}

func hello() *coachd.ModelRequest {
	return &coachd.ModelRequest{MaxTokens: 1024, Messages: []coachd.ModelMessage{
		{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("Hello")}}}}
}

// drain reads a stream to its end.
func drain(s coachd.ModelStream) ([]coachd.ModelEvent, *coachd.ModelResponse, error) {
	defer s.Close()
	var evs []coachd.ModelEvent
	for s.Next() {
		evs = append(evs, s.Event())
	}
	return evs, s.Response(), s.Err()
}

// jsonEqual compares two JSON documents ignoring key order.
func jsonEqual(tb testing.TB, a, b []byte) bool {
	tb.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		tb.Fatalf("bad JSON %s: %v", a, err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		tb.Fatalf("bad JSON %s: %v", b, err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
