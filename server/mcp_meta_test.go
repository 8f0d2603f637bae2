package server_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPSessionMetaChecked: a tool call's _meta coachd/session that is
// not a string (a client that sent the session as a number, or an
// object) was dropped without a word: the tool ran outside any session,
// a save_note saved a note the session never saw. It is refused with an
// error result the client shows, and nothing is done.
func TestMCPSessionMetaChecked(t *testing.T) {
	e := MustChatEnv(t, nil)
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	sess, err := c.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		HTTPClient: &http.Client{Transport: keyTransport(e.alice.key)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	res, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "save_note",
		Arguments: map[string]any{"note_type": "tip", "title": "x", "content": "y"}, Meta: sdk.Meta{"coachd/session": 5}})
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	if len(res.Content) > 0 {
		text = res.Content[0].(*sdk.TextContent).Text
	}
	if !res.IsError || !strings.Contains(text, "coachd/session") {
		t.Fatalf("a numeric session id ran the tool: %s", text)
	}
	list, err := sess.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_notes", Arguments: map[string]any{}})
	if err != nil || list.IsError || strings.Contains(list.Content[0].(*sdk.TextContent).Text, "note_") {
		t.Fatalf("a note was saved: %v %+v", err, list.Content[0])
	}
}
