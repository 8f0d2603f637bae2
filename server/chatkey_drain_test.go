package server_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
)

// restarted starts the server again over e's database, as a new process
// would after e's drained (its model a new fake), and returns its URL.
func (e *chatEnv) restarted(t *testing.T, fake *anthropictest.Server) string {
	t.Helper()
	ts, err := agent.NewToolset(tools.Builtins()...)
	if err != nil {
		t.Fatal(err)
	}
	ag := agent.DefaultAgent()
	runner := agent.NewRunner(agent.Config{
		Store: e.db, Tools: ts, Logger: slog.New(slog.DiscardHandler),
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
		Agents: func(name string) (*agent.Agent, bool) {
			if name == "" || name == ag.Name || name == server.DefaultAgent {
				return ag, true
			}
			return nil, false
		},
	})
	api := server.New(server.Deps{Store: e.db, Logger: slog.New(slog.DiscardHandler), AdminKey: adminKey, Runner: runner, Heartbeat: time.Hour})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { closeServer(api, srv) })
	return srv.URL
}

// TestChatKeyedDrainResent: a keyed POST /v1/chat whose turn the
// server's drain cut (the shutdown's grace ran out mid-turn) is answered
// with the reply cut short and the shutdown's error. Its client, which
// may not have heard that answer, sends it again with its key to the
// server started again: it gets the same answer, error included. A
// review found the partial reply answered without its error, as if
// whole (the cut was known only from the old process's drain).
func TestChatKeyedDrainResent(t *testing.T) {
	g := gateTool{started: make(chan struct{})}
	e := MustChatEnv(t, nil, g)
	e.fake.Enqueue(
		lookThenGate(),
		anthropictest.Text("never sent", 4),
	)
	const body = `{"message":"check it"}`
	firstc := postChatLater(t, e.url, e.alice.key, "drain-1", body)
	<-g.started
	e.api.Drain()
	first := firstc()

	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.Enqueue(anthropictest.Text("Here it is.", 4))
	url := e.restarted(t, fake)
	again, err := postChat(context.Background(), t, url, e.alice.key, "drain-1", body)
	if err != nil {
		t.Fatal(err)
	}
	var a, b map[string]any
	json.Unmarshal(first.body, &a)
	json.Unmarshal(again.body, &b)
	if first.status != http.StatusOK || a["error"] == nil {
		t.Fatalf("the turn the drain cut: %d %s, want 200 and the shutdown's error", first.status, first.body)
	}
	if again.status != http.StatusOK || again.header.Get("Idempotent-Replayed") != "true" || !reflect.DeepEqual(a, b) {
		t.Errorf("resent after the restart: %d %s\nwant the first answer, the cut reply with its error\n%s", again.status, again.body, first.body)
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("the restarted server asked its model %d times, want 0", n)
	}
}
