package openai_test

import (
	"testing"

	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// MustServer starts a fake that is closed with the test.
func MustServer(tb testing.TB) *openaitest.Server {
	tb.Helper()
	srv := openaitest.NewServer()
	tb.Cleanup(srv.Close)
	return srv
}

// newModel returns the adapter pointed at srv; retries off unless cfg says.
func newModel(srv *openaitest.Server, cfg openai.Config) *openai.Model {
	cfg.BaseURL = srv.URL()
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1
	}
	if cfg.Model == "" {
		cfg.Model = "gpt-5.1"
	}
	return openai.New(cfg)
}
