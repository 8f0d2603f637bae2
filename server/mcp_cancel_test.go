package server_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPChatCancelled: a chat call whose client gives up (a desktop
// client's notifications/cancelled aborts the bridge's request; an HTTP
// client goes away) stops its turn, as a cancel disconnect does: the
// upstream request is closed, what was said is stored marked partial,
// the hold is settled and the session is free for the next message.
// The turn ran on to its end (here: until the stalled upstream gave
// up), its session busy, for a reply nobody would read.
func TestMCPChatCancelled(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	stored, _, _ := e.alice.c.Messages(ctx, sess.ID, coachd.Page{})
	before := len(stored)
	e.fake.Enqueue(anthropictest.Text("A long answer that stops halfway", 4).StallAfter(6))
	c := sdk.NewClient(&sdk.Implementation{Name: "desktop", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: e.url + "/v1/mcp",
		HTTPClient: &http.Client{Transport: keyTransport(e.alice.key)}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	// The client gives up once the coach has begun to answer: what was
	// said is the partial reply.
	attached, said := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(said)
		e.followAttached(ctx, t, "/v1/sessions/"+sess.ID+"/stream", e.alice.key, "", "content_delta", attached)
	}()
	<-attached
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: mcp.ChatTool, Arguments: map[string]any{"message": "tell me", "session_id": sess.ID}})
		done <- err
	}()
	<-said
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled call: %v", err)
	}
	select {
	case <-e.fake.Disconnects():
	case <-time.After(5 * time.Second):
		t.Fatal("the turn went on: its upstream request was not closed")
	}
	var msgs []*coachd.Message
	waitFor(t, func() bool {
		msgs, _, _ = e.alice.c.Messages(ctx, sess.ID, coachd.Page{})
		return len(msgs) == before+2
	})
	if last := msgs[len(msgs)-1]; !last.Partial || !strings.HasPrefix("A long answer that stops halfway", last.Content) {
		t.Fatalf("stored reply %+v", last)
	}
	waitFor(t, func() bool {
		st, err := e.db.BudgetStatus(ctx, e.alice.ID)
		return err == nil && st.TokensReserved == 0
	})
	e.fake.Enqueue(anthropictest.Text("Back again.", 5))
	out := mcpChat(t, e, e.alice.key, map[string]any{"message": "go on", "session_id": sess.ID})
	if out["stop_reason"] != "end_turn" || out["text"] != "Back again." {
		t.Fatalf("next chat = %+v", out)
	}
}
