package anthropic_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// BenchmarkStream compares events/s through the adapter with the raw SDK
// stream, against the same fake in the same run. The reply is 500 text
// deltas, padded like the real server's.
func BenchmarkStream(b *testing.B) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	reply := anthropictest.Text(strings.Repeat("word ", 400), 4).Padded()
	srv.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	req := hello()

	b.Run("raw_sdk", func(b *testing.B) {
		client := sdk.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("k"))
		params := sdk.MessageNewParams{Model: anthropic.DefaultModel, MaxTokens: 1024,
			Messages: []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("Hello"))}}
		events := 0
		for b.Loop() {
			s := client.Messages.NewStreaming(context.Background(), params)
			for s.Next() {
				_ = s.Current()
				events++
			}
			if err := s.Err(); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
		b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	})
	b.Run("adapter", func(b *testing.B) {
		m := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "k"})
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
	})
}
