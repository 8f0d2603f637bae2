package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/tools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestHungServerSkipped: a server that accepts connections and never
// answers (initialize hangs) costs the first turn one short wait, then
// is left out of turns without any wait, and is tried again in the
// background: once it answers, the turns get its tools. Its URL and key
// reach neither the model nor the log.
func TestHungServerSkipped(t *testing.T) {
	const secret = "s3cret-hung-key"
	release := make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	srv := fakeServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
			h.ServeHTTP(w, r)
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(ts.Close)
	t.Cleanup(free)
	dir := writePack(t, map[string]string{
		"mcp/hung.yaml":   "name: hung\nurl: " + ts.URL + "/mcp/" + secret + "?token=" + secret + "\nheaders: {X-Api-Key: " + secret + "}\n",
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\ntools: [save_note]\nmcp:\n  servers: [hung]\n---\nYou coach.\n",
	})
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	pack, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins(),
		LoadMCP: func(path string, data []byte) (agent.MCPServer, error) {
			c, err := ParseConfig(path, data, func(string) string { return "" })
			if err != nil {
				return nil, err
			}
			return NewServer(c, Options{Logger: log}), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pack.Close() })
	ctx := context.Background()
	_, u, fake, runner := packTurns(t, pack, log)
	turn := func() (time.Duration, []string) {
		t.Helper()
		fake.Enqueue(anthropictest.Text("Hi.", 5))
		start := time.Now()
		tr, err := runner.Prepare(ctx, agent.TurnRequest{User: u, Agent: "coach", Message: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if res := tr.Run(ctx, discard{}); res.Err != nil || res.Text != "Hi." {
			t.Fatalf("turn = %+v", res)
		}
		d := time.Since(start)
		reqs := fake.Requests()
		var offered []string
		for _, tool := range reqs[len(reqs)-1].Body["tools"].([]any) {
			offered = append(offered, tool.(map[string]any)["name"].(string))
		}
		return d, offered
	}
	d1, offered := turn()
	if d1 > 5*time.Second || !slices.Equal(offered, []string{"save_note"}) {
		t.Errorf("first turn took %s, offered %v: a hung server must cost one short wait, then be left out", d1, offered)
	}
	d2, offered := turn()
	if d2 > time.Second || !slices.Equal(offered, []string{"save_note"}) {
		t.Errorf("second turn took %s, offered %v: a server known to hang must not be waited for again", d2, offered)
	}

	// The server answers at last: it is retried in the background, and a
	// later turn offers its tools.
	free()
	deadline := time.Now().Add(20 * time.Second)
	for {
		list, err := pack.MCP[0].Tools(ctx)
		if err == nil && len(list) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server that answers now is still left out: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, offered := turn(); !slices.Contains(offered, "hung__echo") {
		t.Errorf("after the server answered, offered %v", offered)
	}
	for _, r := range fake.Requests() {
		b, _ := json.Marshal(r.Body)
		if strings.Contains(string(b), secret) {
			t.Errorf("the model was sent the server's key: %s", b)
		}
	}
	if strings.Contains(logs.String(), secret) {
		t.Errorf("the log shows the server's key:\n%s", logs.String())
	}
}
