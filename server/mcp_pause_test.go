package server_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPChatPause: a coach that asks with show_options, through the MCP
// chat tool (Claude Desktop, coachd mcp), shows its question and numbered
// choices in the reply text, and the next chat message answers it by
// number, as on /v1/chat/completions. A review found the reply held only
// the text before the question (the choices were lost) and the answer
// was stored as a new message that dismissed the question.
func TestMCPChatPause(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Where to?", 4),
		anthropictest.ToolUse("toolu_m", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
		anthropictest.Text("Downtown it is.", 4))
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	sess, err := c.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		HTTPClient: &http.Client{Transport: keyTransport(e.alice.key)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	chat := func(args map[string]any) map[string]any {
		t.Helper()
		res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: mcp.ChatTool, Arguments: args})
		if err != nil || res.IsError {
			t.Fatalf("chat %v: %v %+v", args, err, res)
		}
		out, _ := res.StructuredContent.(map[string]any)
		return out
	}
	out := chat(map[string]any{"message": "where should I drive?"})
	text, _ := out["text"].(string)
	if !strings.Contains(text, "Where to?") || !strings.Contains(text, "Pick a zone\n1. Airport\n2. Downtown") || out["stop_reason"] != "awaiting_input" {
		t.Fatalf("the question: %+v", out)
	}
	out = chat(map[string]any{"message": "2", "session_id": out["session_id"]})
	if out["text"] != "Downtown it is." {
		t.Fatalf("the answer: %+v", out)
	}
	reqs := e.fake.Requests()
	if res := reqs[len(reqs)-1].ToolResults(); len(res) != 1 || res[0].ResultText() != "Downtown" {
		t.Errorf("the tool's result: %+v", res)
	}
}
