package server_test

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// echoTool answers its input back, growing the history each round.
type echoTool struct{}

func (echoTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: "echo", Description: "echo", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object"}`)}
}

func (echoTool) Execute(_ context.Context, c coachd.ToolCall, _ coachd.ToolEnv) (coachd.ToolResult, error) {
	return coachd.ToolResult{Content: string(c.Input)}, nil
}

// TestOpenAIBudgetCutFinishReason: a turn its token hold cut short
// (reserve: max, stop reason budget_exhausted) ends with finish_reason
// "length", OpenAI's word for a reply stopped by a token limit, not
// "stop", which reads as a whole answer.
func TestOpenAIBudgetCutFinishReason(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Reserve = agent.ReserveMax
	ag.MaxTokens = 1000
	ag.Limits.MaxRounds = 4
	e := MustChatEnv(t, ag, echoTool{})
	big := `{"s":"` + strings.Repeat("abcd ", 320) + `"}`
	var n atomic.Int64
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Blocks(anthropictest.TextBlock("Checking. ", 2), anthropictest.ToolUse("toolu_"+strconv.FormatInt(n.Add(1), 10), "echo", big))
	})
	var c completion
	r := e.post(e.alice.key, "/v1/chat/completions", oaiBody("go"), nil, &c)
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if got := c.Choices[0].FinishReason; got != "length" {
		t.Errorf("finish_reason %q, want length (stop reason budget_exhausted)", got)
	}
}
