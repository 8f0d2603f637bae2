package openai_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/modeltest"
	"github.com/coachd/coachd/openai"
	"github.com/coachd/coachd/openai/openaitest"
)

// BenchmarkStream is events/s through the adapter for the same reply as
// the Anthropic adapter's BenchmarkStream: 500 text deltas.
func BenchmarkStream(b *testing.B) {
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.SetDefault(openaitest.Reply{Text: strings.Repeat("word ", 400), Chunk: 4})
	m := openai.New(openai.Config{BaseURL: srv.URL(), Model: "gpt-5.1", MaxRetries: -1})
	req := modeltest.Hello("gpt-5.1")
	events := 0
	for b.Loop() {
		s := m.Stream(context.Background(), req)
		for s.Next() {
			_ = s.Event()
			events++
		}
		if err := s.Err(); err != nil {
			b.Fatal(err)
		}
		if coachd.BlocksText(s.Response().Blocks) == "" {
			b.Fatal("empty response")
		}
		s.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
