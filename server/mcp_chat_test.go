package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// keyTransport sends a user's key with each request.
type keyTransport string

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// mcpChat calls /v1/mcp's chat tool as key's user and returns its
// structured result.
func mcpChat(t *testing.T, e *chatEnv, key string, args map[string]any) map[string]any {
	t.Helper()
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		HTTPClient: &http.Client{Transport: keyTransport(key)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ChatTool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("chat: %v %+v", err, res)
	}
	out, _ := res.StructuredContent.(map[string]any)
	return out
}

// TestMCPChatInteraction: a turn of the MCP chat tool that pauses on
// show_options returns the call (tool_use_id, name, input), as POST
// /v1/chat does, so the client can show the choices; the user's next
// message answers it. The chat tool returned the text and stop_reason
// awaiting_input alone: the options the coach asked the user to pick
// from were never seen.
func TestMCPChatInteraction(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Blocks(
		anthropictest.TextBlock("Where to?", 3),
		anthropictest.ToolUse("o1", "show_options", `{"prompt":"Which zone?","options":["Airport","Downtown"]}`),
	))
	out := mcpChat(t, e, e.alice.key, map[string]any{"message": "where should I drive?"})
	in, _ := out["interaction"].(map[string]any)
	if out["stop_reason"] != "awaiting_input" || in["tool_use_id"] != "o1" || in["name"] != "show_options" ||
		in["input"].(map[string]any)["options"].([]any)[1] != "Downtown" {
		t.Fatalf("chat = %+v", out)
	}
}

// TestMCPChatError: a chat turn that ended with an error after some text
// (here its contract unmet) says so in the result's error {code,
// message}, as POST /v1/chat does; the text alone read as the coach's
// whole, successful reply.
func TestMCPChatError(t *testing.T) {
	ag := agent.DefaultAgent()
	ag.Contracts = agent.Contracts{MustCall: []string{"list_notes"}, MaxRepairs: 1}
	e := MustChatEnv(t, ag)
	e.fake.Enqueue(anthropictest.Text("No tools today.", 4), anthropictest.Text("Still none.", 4))
	out := mcpChat(t, e, e.alice.key, map[string]any{"message": "hi"})
	ev, _ := out["error"].(map[string]any)
	if out["stop_reason"] != coachd.TurnContractViolation || ev["code"] != agent.EContractViolation ||
		!strings.Contains(ev["message"].(string), "list_notes") {
		t.Fatalf("chat = %+v", out)
	}
}
