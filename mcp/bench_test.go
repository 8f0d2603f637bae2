package mcp

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

// BenchmarkCall is one tool call's round trip, per transport.
func BenchmarkCall(b *testing.B) {
	for name, cfg := range map[string]func(testing.TB) *Config{"stdio": stdioConfig, "http": httpConfig} {
		b.Run(name, func(b *testing.B) {
			s := NewServer(cfg(b), Options{})
			defer s.Close()
			list, err := s.Tools(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			var echo coachd.Tool
			for _, t := range list {
				if t.Definition().Name == "fake__echo" {
					echo = t
				}
			}
			call := coachd.ToolCall{ID: "toolu_1", Name: "fake__echo", Input: json.RawMessage(`{"text":"hi"}`)}
			b.ResetTimer()
			for b.Loop() {
				if res, err := echo.Execute(context.Background(), call, testEnv); err != nil || res.IsError {
					b.Fatal(res, err)
				}
			}
		})
	}
}
