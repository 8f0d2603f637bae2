package anthropic_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// BenchmarkCall is one short model call (20 text deltas, unpaced)
// three ways against the same in-process fake: the raw SDK with a minimal
// request (the load benchmark's floor), the raw SDK with a coach's
// request (a system prompt and four tools), and coachd's adapter with that
// same request (cache markers, block conversion). It splits what a turn's
// model call costs beyond the floor into the bigger request and the
// adapter.
//
//	go test ./anthropic -run '^$' -bench BenchmarkCall -benchmem
func BenchmarkCall(b *testing.B) {
	srv := anthropictest.NewServer()
	defer srv.Close()
	srv.SetRecording(false)
	reply := anthropictest.Text(strings.Repeat("word ", 20), len("word "))
	srv.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	prompt := strings.Repeat("You are a warm, practical coach. Keep replies short and concrete. ", 12)
	var specs []coachd.ToolSpec
	for _, t := range tools.Builtins() {
		d := t.Definition()
		switch d.Name {
		case "save_note", "list_notes", "show_options", "complete_session":
			specs = append(specs, coachd.ToolSpec{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema})
		}
	}
	msgs := []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("How do I plan my week?")}}}
	client := sdk.NewClient(option.WithBaseURL(srv.URL()), option.WithAPIKey("k"), option.WithMaxRetries(0))
	raw := func(b *testing.B, p sdk.MessageNewParams) {
		for b.Loop() {
			s := client.Messages.NewStreaming(context.Background(), p)
			for s.Next() {
				_ = s.Current()
			}
			if err := s.Err(); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	}
	user := []sdk.MessageParam{sdk.NewUserMessage(sdk.NewTextBlock("How do I plan my week?"))}
	b.Run("raw_minimal", func(b *testing.B) {
		raw(b, sdk.MessageNewParams{Model: anthropic.DefaultModel, MaxTokens: 4096, Messages: user})
	})
	b.Run("raw_coach_request", func(b *testing.B) {
		var ts []sdk.ToolUnionParam
		for _, sp := range specs {
			var schema sdk.ToolInputSchemaParam
			if err := json.Unmarshal(sp.InputSchema, &schema); err != nil {
				b.Fatal(err)
			}
			ts = append(ts, sdk.ToolUnionParam{OfTool: &sdk.ToolParam{Name: sp.Name, Description: sdk.String(sp.Description), InputSchema: schema}})
		}
		raw(b, sdk.MessageNewParams{Model: anthropic.DefaultModel, MaxTokens: 4096, Messages: user,
			System: []sdk.TextBlockParam{{Text: prompt}}, Tools: ts})
	})
	adapter := func(b *testing.B, url string) {
		// Untraced, as coachd serve without --otlp-endpoint: the call
		// goes out through the SDK's Post.
		m := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: url, MaxRetries: -1, Untraced: true})
		req := &coachd.ModelRequest{MaxTokens: 4096, System: []coachd.Block{coachd.TextBlock(prompt)}, Tools: specs, Messages: msgs}
		for b.Loop() {
			s := m.Stream(context.Background(), req)
			for s.Next() {
				_ = s.Event()
			}
			if err := s.Err(); err != nil {
				b.Fatal(err)
			}
			s.Close()
		}
	}
	b.Run("adapter_coach_request", func(b *testing.B) { adapter(b, srv.URL()) })
	// The same request answered with a tool call (a tool turn's first
	// model call): text, then a tool_use whose input streams in three
	// partial_json deltas, padded like the real server's.
	b.Run("adapter_tool_reply", func(b *testing.B) {
		tsrv := anthropictest.NewServer()
		defer tsrv.Close()
		tsrv.SetRecording(false)
		treply := anthropictest.Blocks(anthropictest.TextBlock("Let me save that for you.", len("word ")),
			anthropictest.ToolUse("toolu_bench", "save_note", `{"text":"Plan the week on Sunday evening","tags":["planning"]}`, 12, 30)).Padded()
		tsrv.SetScript(func(*anthropictest.Request) anthropictest.Reply { return treply })
		adapter(b, tsrv.URL())
	})
}
