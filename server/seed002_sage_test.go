package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
)

// seed002Env serves examples/sage (seed 002's pack) with the model at a
// fake Anthropic API, and returns the fake, the server's URL and a user's
// key.
func seed002Env(t *testing.T) (*anthropictest.Server, string, string) {
	t.Helper()
	return seed002EnvAt(t, filepath.Join("..", "examples", "sage"), 0)
}

// seed002EnvAt is seed002Env for the pack in dir and a user with the
// given token budget.
func seed002EnvAt(t *testing.T, dir string, budget int64) (*anthropictest.Server, string, string) {
	t.Helper()
	ctx := context.Background()
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := agent.NewToolset(tools.ForPack(p, p.FileTypes())...)
	if err != nil {
		t.Fatal(err)
	}
	fake := anthropictest.NewServer()
	r := agent.NewRunner(agent.Config{Store: db, Tools: ts, Agents: p.Agent,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true})})
	api := server.New(server.Deps{Store: db, Runner: r, Pack: p, Heartbeat: time.Hour})
	srv := httptest.NewServer(api)
	t.Cleanup(func() { closeServer(api, srv); fake.Close() })
	key, err := server.CreateUser(ctx, db, &coachd.User{Name: "ada", TokenBudget: budget})
	if err != nil {
		t.Fatal(err)
	}
	return fake, srv.URL, key
}

// seed002Stream posts body to the sage dialect and returns the data lines.
func seed002Stream(t *testing.T, url, key, body string) []string {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/v1/chat/stream?protocol=sage", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var out []string
	for _, line := range strings.Split(string(raw), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

// TestSeed002MaxToolIterations: seed 002's loop makes at most
// MAX_TOOL_ITERATIONS model calls per request (line 224, "const
// MAX_TOOL_ITERATIONS = 5"; line 849, "MAX_TOOL_ITERATIONS = 5 +
// wall-clock timeout (55s) + circuit breaker"), and at the limit it
// leaves "while (iteration < MAX_TOOL_ITERATIONS)" after the round's
// "enqueue({ roundBoundary: true })" (line 338) without an error.
func TestSeed002MaxToolIterations(t *testing.T) {
	fake, url, key := seed002Env(t)
	for i := range 8 {
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_n%d", i), "list_notes", `{}`)))
	}
	lines := seed002Stream(t, url, key, `{"message":"look through everything"}`)
	got := strings.Join(lines, "\n")
	calls := strings.Count(got, `{"toolCall":`)
	if n := len(fake.Requests()); n != 5 || calls != 5 {
		t.Fatalf("model calls %d, toolCall events %d; seed 002 makes at most 5 (MAX_TOOL_ITERATIONS)\n%s", n, calls, got)
	}
	if strings.Contains(got, `{"error":`) {
		t.Errorf("seed 002's loop ends at MAX_TOOL_ITERATIONS without an error:\n%s", got)
	}
	if n := len(lines); n < 2 || lines[n-2] != `{"roundBoundary":true}` || lines[n-1] != "[DONE]" {
		t.Errorf("seed 002's last round ends with its roundBoundary, then [DONE]:\n%s", got)
	}
}

// TestSeed002SplitToolNoToolCall: seed 002's loop checks for a
// split-conversation tool before it emits toolCall (lines 265-278: "if
// (splitTool) { ... enqueue({ showOptions: ... }) ... break }", then
// lines 280-283 "// Emit toolCall event for shimmer indicator"), so a
// round ending in show_options / show_pulse_check sends no toolCall. Its
// client counts toolCall into activeToolCountRef and resets it only at
// roundBoundary (lines 373-381), which never comes after showOptions.
func TestSeed002SplitToolNoToolCall(t *testing.T) {
	fake, url, key := seed002Env(t)
	for _, c := range []struct{ tool, input, want string }{
		{"show_options", `{"options":["Morning","Evening"]}`, `{"showOptions":`},
		{"show_pulse_check", `{"context":"Your week"}`, `{"showPulseCheck":`},
	} {
		fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("When?", 0), anthropictest.ToolUse("toolu_"+c.tool, c.tool, c.input)))
		got := strings.Join(seed002Stream(t, url, key, `{"message":"when should I run?"}`), "\n")
		if !strings.Contains(got, c.want) {
			t.Fatalf("%s: no %s\n%s", c.tool, c.want, got)
		}
		if strings.Contains(got, `{"toolCall":`) {
			t.Errorf("%s: seed 002 sends no toolCall for a split-conversation tool; coachd sent:\n%s", c.tool, got)
		}
	}
}

// TestSeed002CompleteExpiredSession: seed 002's complete_session on an
// expired session returns (lines 665-671) "{ success: false, error:
// 'session_expired', message: 'Session expired before completion.
// Starting fresh next time.' }", the tool_result content being
// "JSON.stringify(result)" (line 293), without is_error: the executor
// returned, it did not throw.
func TestSeed002CompleteExpiredSession(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	var pf preflightBody
	if r := e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, &pf); r.status != 200 {
		t.Fatalf("preflight %d %s", r.status, r.body)
	}
	if _, err := e.db.SQL().Exec(`UPDATE sessions SET status = 'expired' WHERE id = ?`, pf.SessionID); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Result  json.RawMessage `json:"result"`
		IsError bool            `json:"is_error"`
	}
	body := fmt.Sprintf(`{"tool_name":"complete_session","tool_input":{"type":"session"},"session_id":%q}`, pf.SessionID)
	r := e.post(e.alice.key, "/v1/tools/execute", body, nil, &out)
	if r.status != 200 {
		t.Fatalf("execute: %d %s", r.status, r.body)
	}
	var res struct {
		Success *bool  `json:"success"`
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(out.Result, &res) != nil || res.Success == nil || *res.Success || res.Error != "session_expired" {
		t.Fatalf("complete_session on an expired session: %s; seed 002 documents {success:false, error:'session_expired', message}", r.body)
	}
	const want = `{"success":false,"error":"session_expired","message":"Session expired before completion. Starting fresh next time."}`
	if string(out.Result) != want || out.IsError {
		t.Errorf("result %s (is_error %t), want JSON.stringify's %s", out.Result, out.IsError, want)
	}
}

// TestSeed002BudgetStop: under reserve: max (agent/budget.go) the runner
// stops a turn before a round its hold can no longer cover, with stop
// reason budget_exhausted and no error event. The sage client then saw
// its toolCall shimmer and [DONE], nothing saying why the reply broke
// off; it shows an {error} for every other early stop (the breaker's
// "enqueue({ error: ... })", seed 002 line 320).
func TestSeed002BudgetStop(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "sage"))); err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(dir, "agents", "sage.md")
	raw, err := os.ReadFile(def)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(def, []byte(strings.Replace(string(raw), "reserve: estimate", "reserve: max", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	fake, url, key := seed002EnvAt(t, dir, 100_000_000)
	// The first round spends far more than the turn's hold: no second round.
	round := anthropictest.Blocks(anthropictest.TextBlock("Let me look.", 0), anthropictest.ToolUse("toolu_b", "list_notes", `{}`))
	round.Usage = &coachd.Usage{InputTokens: 5_000_000, OutputTokens: 100}
	fake.Enqueue(round)
	lines := seed002Stream(t, url, key, `{"message":"look through everything"}`)
	got := strings.Join(lines, "\n")
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("model calls %d, want 1 (the hold covers no second round)\n%s", n, got)
	}
	if n := len(lines); n < 2 || !strings.HasPrefix(lines[n-2], `{"error":"`) || !strings.Contains(lines[n-2], "budget") || lines[n-1] != "[DONE]" {
		t.Errorf("a turn stopped by its budget ends with an {error} saying so, then [DONE]:\n%s", got)
	}
}

// TestSeed002SplitRoundNoToolCall: seed 002's loop looks for a
// split-conversation tool among all of the round's tool_use blocks, after
// finalMessage, and breaks before "// Emit toolCall event for shimmer
// indicator" (lines 265-283): a round that saves a file and shows options
// sends no toolCall at all. Its client resets activeToolCountRef only at a
// roundBoundary, which never follows showOptions, so a toolCall streamed
// before the pause leaves the shimmer counter at 1.
func TestSeed002SplitRoundNoToolCall(t *testing.T) {
	fake, url, key := seed002Env(t)
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Saved. When?", 0),
		anthropictest.ToolUse("toolu_c", "save_file", `{"file_type":"capture","content":"run more"}`),
		anthropictest.ToolUse("toolu_o", "show_options", `{"options":["Morning","Evening"]}`)))
	lines := seed002Stream(t, url, key, `{"message":"note that I want to run more; when should I?"}`)
	got := strings.Join(lines, "\n")
	want := `{"text":"Saved. When?"}` + "\n" + `{"showOptions":{"options":["Morning","Evening"],"toolUseId":"toolu_o"}}` + "\n[DONE]"
	if got != want {
		t.Errorf("got:\n%s\nwant seed 002's:\n%s", got, want)
	}
}

// TestSeed002ErrorInToolUseNoToolCall: seed 002 sends its toolCalls after
// finalMessage (line 280), so a stream that fails while the model is
// still writing a tool_use sends the {error} and no toolCall: the tool
// never runs, and the client's shimmer counter, reset only by a
// roundBoundary, must not count it.
func TestSeed002ErrorInToolUseNoToolCall(t *testing.T) {
	fake, url, key := seed002Env(t)
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Saving your plan.", 0),
		anthropictest.ToolUse("toolu_s", "save_file", `{"file_type":"day-plan","content":"Run, then write."}`, 5)).
		ErrorAfter(9, "overloaded_error", "Overloaded"))
	lines := seed002Stream(t, url, key, `{"message":"plan my day"}`)
	got := strings.Join(lines, "\n")
	if !strings.Contains(got, `{"error":`) {
		t.Fatalf("no error:\n%s", got)
	}
	if strings.Contains(got, `{"toolCall":`) {
		t.Errorf("a toolCall for a tool_use cut mid-stream, which never ran:\n%s", got)
	}
}

// TestSeed002RefusedNewChatNoSession: Sage's client starts a chat with a
// message and no session; a turn refused before it starts (here the
// user's budget: the pack's free preview used up) stores nothing, so it
// must leave no empty conversation behind in the user's list, one more at
// every retry.
func TestSeed002RefusedNewChatNoSession(t *testing.T) {
	fake, url, key := seed002Env(t) // no budget: examples/sage's 3 free turns
	for range 3 {
		fake.Enqueue(anthropictest.Text("Hi.", 0))
		seed002Stream(t, url, key, `{"message":"hello"}`)
	}
	for range 2 {
		got := strings.Join(seed002Stream(t, url, key, `{"message":"hello?"}`), "\n")
		if !strings.Contains(got, `{"error":"The free preview`) {
			t.Fatalf("no budget error:\n%s", got)
		}
	}
	req, _ := http.NewRequest("GET", url+"/v1/sessions", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Sessions []struct {
			ID    string `json:"id"`
			Title string `json:"title"`
		} `json:"sessions"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if len(out.Sessions) != 3 {
		t.Errorf("%d sessions, want the 3 that ran a turn: %+v", len(out.Sessions), out.Sessions)
	}
}
