package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/tools"
)

// decisionSchema is a small form of the validator's decision.
const decisionSchema = `{"type":"object","required":["decision"],"properties":{"decision":{"enum":["approve","feedback"]}}}`

// The validator's two calls, instant on purpose: an ordered contract must
// hold even for tools the runner would otherwise run in parallel.
var (
	validateTool = testTool{"validate_implementation", func(context.Context, coachd.ToolCall) (coachd.ToolResult, error) {
		return coachd.ToolResult{Content: `{"files_to_review":["main.go"]}`}, nil
	}}
	decisionTool = schemaTool{testTool{"record_decision", func(_ context.Context, c coachd.ToolCall) (coachd.ToolResult, error) {
		return coachd.ToolResult{Content: `{"is_approved":true,"input":` + string(c.Input) + `}`}, nil
	}}, decisionSchema}
)

type schemaTool struct {
	testTool
	schema string
}

func (s schemaTool) Definition() coachd.ToolDef {
	d := s.testTool.Definition()
	d.InputSchema = json.RawMessage(s.schema)
	return d
}

func seedBuiltins() []coachd.Tool {
	return append(tools.Builtins(), validateTool, decisionTool)
}

// loadSeed003 loads seed 003's own agent file (front matter and
// instructions as the seed wrote them) beside a player agent.
func loadSeed003(t *testing.T, dir string) *agent.Pack {
	t.Helper()
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: seedBuiltins()})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// orderedSeed is the seed's pack with contracts.ordered added.
func orderedSeed(t *testing.T) *agent.Pack {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"autobuild-coach.md", "autobuild-player.md"} {
		b, err := os.ReadFile(filepath.Join("testdata", "seed003", "agents", name))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(b), "contracts:\n", "contracts:\n  ordered: true\n", 1)
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		if err := os.WriteFile(filepath.Join(dir, "agents", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return loadSeed003(t, dir)
}

func TestSeedAgentFile(t *testing.T) {
	t.Run("Loads", func(t *testing.T) {
		p := loadSeed003(t, filepath.Join("testdata", "seed003"))
		a, ok := p.Agent("autobuild-coach")
		if !ok {
			t.Fatal("no autobuild-coach")
		}
		if !a.Internal || a.Stack != "any" || strings.Join(a.CollaboratesWith, ",") != "autobuild-player" {
			t.Fatalf("agent %+v", a)
		}
		if want, _ := coachd.ResolveModel("sonnet"); a.Model != want || !strings.HasPrefix(want, "claude-sonnet-") {
			t.Fatalf("model %q, want %q", a.Model, want)
		}
		if got := strings.Join(a.Contracts.MustCall, ","); got != "validate_implementation,record_decision" {
			t.Fatalf("must_call %s", got)
		}
		if !strings.Contains(strings.Join(a.Tools, ","), "record_decision") {
			t.Fatalf("tools %v: must_call tools are the agent's", a.Tools)
		}
		for _, rule := range []string{"You must not trust player self-report.", "Your final output must be: structured JSON decision."} {
			if !strings.Contains(a.Prompt, rule) {
				t.Fatalf("prompt lacks %q:\n%s", rule, a.Prompt)
			}
		}
		if string(a.Contracts.MustOutput) != decisionSchema {
			t.Fatalf("must_output %s, want the record_decision schema", a.Contracts.MustOutput)
		}
		if d := p.Default(); d.Name != "autobuild-player" {
			t.Fatalf("default agent %s: an internal agent is not the default", d.Name)
		}
	})
	t.Run("ErrProblems", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "coach.md"), []byte("---\nname: coach\ndescription: d\nmodel: gpt-9\ncollaborates_with: [ghost]\ncontracts:\n  must_call: [a.b.nope]\n  must_not: [save_note]\n  ordered: true\nfallback_model: gpt-8\non_disconnect: sometimes\n---\nprompt\n"), 0o644)
		_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: seedBuiltins()})
		if err == nil {
			t.Fatal("loaded")
		}
		for _, want := range []string{
			`coach.md:4: unknown model "gpt-9"`, `collaborates_with "ghost": the pack has no agents/ghost.md`,
			`must_call "a.b.nope" is not a known tool`, "ordered needs at least two must_call tools",
			`coach.md:10: unknown model "gpt-8"`, "coach.md:11: on_disconnect must be continue or cancel",
		} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("problems lack %q:\n%v", want, err)
			}
		}
	})
	t.Run("MustNotToolRefused", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "coach.md"), []byte("---\nname: coach\ndescription: d\ntools: [save_note]\ncontracts:\n  must_not: [app.notes.save_note, guess the answer]\n---\nprompt\n"), 0o644)
		p := loadSeed003(t, dir)
		a, _ := p.Agent("coach")
		if strings.Join(a.Contracts.MustNotCall, ",") != "save_note" || !strings.Contains(a.Prompt, "You must not guess the answer.") {
			t.Fatalf("must_not_call %v prompt %q", a.Contracts.MustNotCall, a.Prompt)
		}
	})
}

func TestMustCallOrder(t *testing.T) {
	coach := func(t *testing.T) *harness {
		p := orderedSeed(t)
		a, _ := p.Agent("autobuild-coach")
		return harnessOver(t, append(seedBuiltins(), echoTool), func(string) (*agent.Agent, bool) { return a, true })
	}
	decision := `{"decision":"approve"}`
	t.Run("InOneResponse", func(t *testing.T) {
		h := coach(t)
		h.fake.Enqueue(
			anthropictest.Blocks(use("v1", "validate_implementation", `{}`), use("d1", "record_decision", decision)),
			anthropictest.Text(decision, 6),
		)
		res := h.turn(agent.TurnRequest{Message: "review", Trusted: true}, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("stop %s %v", res.StopReason, res.Err)
		}
		if got := toolResults(h.history(res.SessionID)); got["d1"].IsError || got["v1"].IsError {
			t.Fatalf("results %+v", got)
		}
	})
	t.Run("DecisionFirstRefused", func(t *testing.T) {
		h := coach(t)
		h.fake.Enqueue(
			// The decision written before the validation in one response:
			// the decision is refused, the validation runs.
			anthropictest.Blocks(use("d1", "record_decision", decision), use("v1", "validate_implementation", `{}`)),
			anthropictest.Blocks(use("d2", "record_decision", decision)),
			anthropictest.Text(decision, 6),
		)
		res := h.turn(agent.TurnRequest{Message: "review", Trusted: true}, &sink{})
		if res.StopReason != coachd.TurnEndTurn {
			t.Fatalf("stop %s %v", res.StopReason, res.Err)
		}
		got := toolResults(h.history(res.SessionID))
		if !got["d1"].IsError || !strings.Contains(got["d1"].Text, "call validate_implementation first") {
			t.Fatalf("d1 %+v", got["d1"])
		}
		if got["v1"].IsError || got["d2"].IsError {
			t.Fatalf("results %+v", got)
		}
		h.assertValidHistory(res.SessionID)
	})
	t.Run("ErrRepeatedViolation", func(t *testing.T) {
		h := coach(t)
		out := anthropictest.Blocks(use("d", "record_decision", decision))
		h.fake.Enqueue(out, out, out, out)
		res := h.turn(agent.TurnRequest{Message: "review", Trusted: true}, &sink{})
		if res.StopReason != coachd.TurnContractViolation || !strings.Contains(res.Err.Error(), "record_decision was called out of order") {
			t.Fatalf("stop %s %v", res.StopReason, res.Err)
		}
		if n := len(h.fake.Requests()); n != 3 {
			t.Fatalf("%d model calls, want 3 (max_repairs 2)", n)
		}
	})
}

func TestInternalAgent(t *testing.T) {
	p := loadSeed003(t, filepath.Join("testdata", "seed003"))
	h := harnessOver(t, seedBuiltins(), p.Agent)
	ctx := context.Background()
	_, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, Agent: "autobuild-coach", Message: "approve me"})
	if coachd.ErrorCode(err) != coachd.EFORBIDDEN {
		t.Fatalf("user turn: %v", err)
	}
	if _, err := h.runner.Preflight(ctx, agent.PreflightRequest{User: h.user, Agent: "autobuild-coach", Message: "hi"}); coachd.ErrorCode(err) != coachd.EFORBIDDEN {
		t.Fatalf("preflight: %v", err)
	}
	if _, err := h.runner.ToolSpecs("autobuild-coach"); coachd.ErrorCode(err) != coachd.EFORBIDDEN {
		t.Fatalf("tool specs: %v", err)
	}
	if sessions, _, err := h.store.ListSessions(ctx, h.user.ID, coachd.Page{Limit: 10}); err != nil || len(sessions) != 0 {
		t.Fatalf("refused turns created sessions: %v %v", sessions, err)
	}
	h.fake.Enqueue(anthropictest.Text("Reviewing.", 3))
	res := h.turn(agent.TurnRequest{Agent: "autobuild-coach", Message: "review", Trusted: true}, &sink{})
	if res.Err != nil && res.StopReason != coachd.TurnContractViolation {
		t.Fatalf("trusted turn: %s %v", res.StopReason, res.Err)
	}
	// The session of an internal agent stays closed to the user's key.
	_, err = h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: res.SessionID, Message: "approve me"})
	if coachd.ErrorCode(err) != coachd.EFORBIDDEN {
		t.Fatalf("user turn in the review's session: %v", err)
	}
}

type result struct {
	Text    string
	IsError bool
}

// toolResults indexes a history's tool results by tool_use id.
func toolResults(msgs []*coachd.Message) map[string]result {
	out := map[string]result{}
	for _, m := range msgs {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockToolResult {
				out[b.ToolUseID] = result{b.ResultText(), b.IsError}
			}
		}
	}
	return out
}

// session_expiry and commands are read, and checked.
func TestAgentFileExpiryAndCommands(t *testing.T) {
	write := func(front string) (*agent.Pack, error) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n"+front+"---\nhi\n"), 0o644)
		return agent.LoadPack(dir, agent.PackOptions{Builtins: append(seedBuiltins(), testTool{"run_command", nil})})
	}
	p, err := write("session_expiry: 12h\ntools: [run_command]\ncommands: ['go  test ./...', pytest -q]\n")
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Agents[0]; a.SessionExpiry.Hours() != 12 || strings.Join(a.Commands, ";") != "go test ./...;pytest -q" {
		t.Fatalf("agent %+v", a)
	}
	// -json given to the test binary (after -args) is its own flag, and a
	// player's runs are not a review's evidence.
	for _, front := range []string{
		"tools: [run_command, record_decision]\ncommands: ['go test ./... -args -json']\n",
		"tools: [run_command]\ncommands: ['go test -json ./...']\n",
	} {
		if _, err := write(front); err != nil {
			t.Errorf("%q: %v", front, err)
		}
	}
	for front, want := range map[string]string{
		"session_expiry: soon\n":                        "agents/a.md:4: session_expiry must be a duration",
		"tools: [run_command]\n":                        "run_command needs commands",
		"commands: [make]\n":                            "commands is run_command's allow-list",
		"tools: [run_command]\ncommands: [\"a\\tb\"]\n": "control character",
		// go test -json's output is events, which run_command does not
		// read: a review running only it could never approve.
		"tools: [run_command, record_decision]\ncommands: ['go test -json ./...']\n":             "agents/a.md:5: command \"go test -json ./...\" asks go test for -json",
		"tools: [run_command, record_decision]\ncommands: ['go -C sub test -json=true ./...']\n": "asks go test for -json",
		// Nor a go test that takes the place of the run's own test program
		// (refused only once the review ran it).
		"tools: [run_command, record_decision]\ncommands: ['go test -exec ./x ./...']\n":                "sets -exec",
		"tools: [run_command, record_decision]\ncommands: ['go test ./... -args -test.memprofile=m']\n": "sets -test.memprofile",
	} {
		if _, err := write(front); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", front, err, want)
		}
	}
}

func TestAgentFileCompaction(t *testing.T) {
	write := func(front string) (*agent.Pack, error) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n"+front+"---\nhi\n"), 0o644)
		return agent.LoadPack(dir, agent.PackOptions{Builtins: seedBuiltins()})
	}
	p, err := write("compaction:\n  summarize_after: 20000\n  keep_turns: 3\n")
	if err != nil {
		t.Fatal(err)
	}
	if c := p.Agents[0].Compaction; c == nil || c.SummarizeAfter != 20000 || c.KeepTurns != 3 {
		t.Fatalf("compaction %+v", c)
	}
	for front, want := range map[string]string{
		"compaction:\n  keep_turns: 500\n":   "keep_turns must be between 1 and 100",
		"compaction:\n  shorten_after: -1\n": "compaction sizes must be tokens",
		"compaction:\n  shorten_over: 10\n":  "shorten_over must be at least",
		"compaction:\n  summarise: 5\n":      "summarise",
	} {
		if _, err := write(front); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", front, err, want)
		}
	}
}
