package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

// writePack writes a pack whose coach mounts the fake server (the test
// binary) and returns its directory.
func writePack(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// packTurns runs pack's agents over a real SQLite store and a fake
// Messages API, as user ada; log may be nil.
func packTurns(t *testing.T, pack *agent.Pack, log *slog.Logger) (*sqlstore.DB, *coachd.User, *anthropictest.Server, *agent.Runner) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "coachd.db"), coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &coachd.User{Name: "ada", TokenBudget: 1_000_000}
	if err := db.CreateUser(ctx, u, "hash-ada"); err != nil {
		t.Fatal(err)
	}
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	ts, err := agent.NewToolset(append(tools.Builtins(), pack.Tools...)...)
	if err != nil {
		t.Fatal(err)
	}
	runner := agent.NewRunner(agent.Config{Store: db, Tools: ts, Agents: pack.Agent, Logger: log,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1})})
	return db, u, fake, runner
}

func loadPack(t *testing.T, dir string) (*agent.Pack, error) {
	getenv := func(k string) string {
		if k == "FAKE_BIN" {
			return os.Args[0]
		}
		return ""
	}
	return agent.LoadPack(dir, agent.PackOptions{
		Builtins: tools.Builtins(),
		LoadMCP: func(path string, data []byte) (agent.MCPServer, error) {
			c, err := ParseConfig(path, data, getenv)
			if err != nil {
				return nil, err
			}
			c.Dir = dir
			return NewServer(c, Options{StartWait: 20 * time.Second}), nil
		},
	})
}

const fakeServerFile = `name: fake
command: ${FAKE_BIN}
env: {COACHD_MCP_FAKE: stdio, MCP_FAKE_TOKEN: tok}
timeout: 5s
`

// TestTurnCallsMCPTool: a full turn where the model (the fake Anthropic
// API, through the real SDK) calls an MCP tool: the agent's allow/deny
// lists shape what the model is offered, the call carries the user and
// session as _meta, and the result is stored in history.
func TestTurnCallsMCPTool(t *testing.T) {
	dir := writePack(t, map[string]string{
		"mcp/fake.yaml": fakeServerFile,
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\ntools: [save_note]\n" +
			"mcp:\n  servers: [fake]\n  allow: [\"fake__e*\", fake__fail]\n  deny: [fake__env]\n---\nYou coach.\n",
	})
	pack, err := loadPack(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pack.Close() })
	ctx := context.Background()
	db, u, fake, runner := packTurns(t, pack, nil)
	fake.Enqueue(
		anthropictest.Blocks(anthropictest.ToolUse("toolu_1", "fake__echo", `{"text":"hi"}`),
			anthropictest.ToolUse("toolu_2", "fake__fail", `{}`), anthropictest.ToolUse("toolu_3", "fake__echo", `{"text":7}`)),
		anthropictest.Text("Done.", 10),
	)
	turn, err := runner.Prepare(ctx, agent.TurnRequest{User: u, Agent: "coach", Message: "use the tools"})
	if err != nil {
		t.Fatal(err)
	}
	res := turn.Run(ctx, discard{})
	if res.Err != nil || res.StopReason != coachd.TurnEndTurn || res.Text != "Done." {
		t.Fatalf("turn = %+v, err %v", res, res.Err)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var offered []string
	for _, tool := range reqs[0].Body["tools"].([]any) {
		offered = append(offered, tool.(map[string]any)["name"].(string))
	}
	slices.Sort(offered)
	if want := []string{"fake__echo", "fake__fail", "save_note"}; !slices.Equal(offered, want) {
		t.Errorf("offered tools = %v, want %v", offered, want)
	}
	// The user and session travel as _meta: nothing the model reads
	// names them (the fake echoes them back only in its result).
	for _, key := range []string{"system", "messages", "tools"} {
		b, _ := json.Marshal(reqs[0].Body[key])
		if strings.Contains(string(b), u.ID) || strings.Contains(string(b), "coachd/") {
			t.Errorf("the model's %s names the user: %s", key, b)
		}
	}
	msgs, err := db.History(ctx, u.ID, res.SessionID)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]coachd.Block{}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockToolResult {
				results[b.ToolUseID] = b
			}
		}
	}
	want := "echo: hi user=" + u.ID + " session=" + res.SessionID
	if b := results["toolu_1"]; b.IsError || b.ResultText() != want {
		t.Errorf("toolu_1 = %q (error %v), want %q", b.ResultText(), b.IsError, want)
	}
	if b := results["toolu_2"]; !b.IsError || b.ResultText() != "the widget is broken" {
		t.Errorf("toolu_2 = %q (error %v)", b.ResultText(), b.IsError)
	}
	// The server's inputSchema is checked before the call is made.
	if b := results["toolu_3"]; !b.IsError || !strings.Contains(b.ResultText(), "Invalid input for fake__echo") {
		t.Errorf("toolu_3 = %q (error %v)", b.ResultText(), b.IsError)
	}

	// The API for apps that run their own loop serves the same tools.
	specs, err := runner.ToolSpecsContext(ctx, "coach")
	if err != nil || !slices.ContainsFunc(specs, func(s coachd.ToolSpec) bool { return s.Name == "fake__echo" }) ||
		slices.ContainsFunc(specs, func(s coachd.ToolSpec) bool { return s.Name == "fake__env" }) {
		t.Errorf("tool specs = %v, %v", specs, err)
	}
	out, err := runner.ExecuteTool(ctx, agent.ExecRequest{User: u, Agent: "coach",
		Call: coachd.ToolCall{Name: "fake__echo", Input: json.RawMessage(`{"text":"own loop"}`)}})
	if err != nil || out.IsError || out.Result != "echo: own loop user="+u.ID+" session=<nil>" {
		t.Errorf("execute = %+v, %v", out, err)
	}
	out, err = runner.ExecuteTool(ctx, agent.ExecRequest{User: u, Agent: "coach",
		Call: coachd.ToolCall{Name: "fake__env", Input: json.RawMessage(`{}`)}})
	if err != nil || !out.IsError || !strings.Contains(out.Result, "unknown tool") {
		t.Errorf("a denied tool ran: %+v, %v", out, err)
	}

	// Closing the pack (what coachd serve does on shutdown) stops the
	// server's process.
	pid, err := strconv.Atoi(call(t, mustTool(t, pack.MCP[0].(*Server), "fake__pid"), `{}`).Content)
	if err != nil {
		t.Fatal(err)
	}
	if err := pack.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("server process %d still there after Close: %v", pid, err)
	}
}

// TestPackMCPProblems: a pack's bad MCP files and bad agent mcp: keys are
// reported with file:line, like every pack problem.
func TestPackMCPProblems(t *testing.T) {
	dir := writePack(t, map[string]string{
		"mcp/fake.yaml":   fakeServerFile,
		"mcp/broken.yaml": "name: broken\nurl: ftp://x\ntimeout: forever\n",
		"agents/coach.md": "---\nname: coach\ndescription: A coach.\nmcp:\n  servers: [fake, ghost]\n  allow: [\"[\"]\n  colour: red\n---\nYou coach.\n",
	})
	_, err := loadPack(t, dir)
	var pe *agent.PackError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	got := pe.Error()
	for _, want := range []string{
		"mcp/broken.yaml:2: url must be an absolute http or https URL",
		"mcp/broken.yaml:3: timeout must be a duration",
		`agents/coach.md:5: unknown MCP server "ghost" (no mcp/ghost.yaml)`,
		`agents/coach.md:6: mcp.allow: "[" is not a tool name or pattern`,
		`agents/coach.md:7: unknown key "colour"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
}

type discard struct{}

func (discard) Send(coachd.Event) error { return nil }
