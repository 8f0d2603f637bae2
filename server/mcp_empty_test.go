package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPChatEmptyMessage: a chat call with a blank message is refused
// in the chat tool's own terms (its one required field); it read
// "message: message, attachments, tool_result or retry is required",
// naming fields the tool does not have.
func TestMCPChatEmptyMessage(t *testing.T) {
	e := MustChatEnv(t, nil)
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		HTTPClient: &http.Client{Transport: keyTransport(e.alice.key)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: mcp.ChatTool, Arguments: map[string]any{"message": "  "}})
	if err != nil || !res.IsError || len(res.Content) != 1 {
		t.Fatalf("chat with a blank message: %v %+v", err, res)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !strings.Contains(text, "message") || strings.Contains(text, "attachments") {
		t.Fatalf("refusal = %q; want the message required, in the chat tool's terms", text)
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Fatalf("the model was called %d times", n)
	}
}
