package server_test

import (
	"context"
	"net/http"
	"testing"

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
