package agent_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

// manualClock is a clock the test moves: coachd's store and runner and
// the fake's prompt cache all read it, so "4 minutes later" takes no time.
type manualClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *manualClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// sessionCost is what a scripted session cost, in tokens.
type sessionCost struct {
	Usage  coachd.Usage // summed over every model call
	Calls  int
	Billed float64 // input tokens weighted as Claude bills them
	Naive  int64   // every call's whole prompt at the input price
}

func (c sessionCost) Ratio() float64 { return c.Billed / float64(c.Naive) }

// sageTurns is the benchmark's script: 20 user messages to Sage.
var sageTurns = []string{
	"Morning. I slept badly and I have a big presentation at 3pm. Can we plan the day?",
	"The presentation is the main thing. I also promised to call my mother and to go for a run.",
	"Let's put the run before lunch. What should I do first?",
	"I finished the slides draft. Feeling a bit better about it now.",
	"Can you remind me what I said I wanted from this month last week?",
	"I keep postponing the run. It is the third time this week.",
	"Honestly I think I am avoiding it because I feel out of shape.",
	"Okay, a 15 minute walk instead. That feels doable.",
	"Back from the walk. It helped more than I expected.",
	"I want to capture an idea: a weekly call with my brother on Sundays.",
	"The presentation went well! My manager asked me to lead the next one.",
	"I am nervous about leading though. I have never done that.",
	"What did we learn about how I handle nerves before?",
	"Let's write that down as a pattern so I remember it.",
	"I called my mother. We talked for an hour, it was lovely.",
	"I am tired now. Should I still do the evening reading I planned?",
	"Fine, I will skip it and go to bed early. Can we close the day?",
	"Energy was 6 out of 10 today, mood good, focus on work and family.",
	"One more thing: tomorrow I want to start earlier, at 7.",
	"Thanks Sage. Good night.",
}

// sageSession is a Sage session over a real SQLite store, the pack's
// tools and the fake API, all on one manual clock.
type sageSession struct {
	tb     testing.TB
	clock  *manualClock
	fake   *anthropictest.Server
	db     *sqlstore.DB
	runner *agent.Runner
	user   *coachd.User
	id     string

	mu          sync.Mutex
	turn, round int
}

func newSageSession(tb testing.TB) *sageSession { return newSageSessionIn(tb, coachd.UnitTokens, nil) }

// newSageSessionIn is newSageSession with budgets in unit and the Sage
// agent changed by mod.
func newSageSessionIn(tb testing.TB, unit coachd.BudgetUnit, mod func(*agent.Agent)) *sageSession {
	tb.Helper()
	ctx := context.Background()
	clock := &manualClock{t: time.Date(2026, 3, 2, 8, 0, 5, 0, time.UTC)}
	db, err := sqlstore.Open(ctx, filepath.Join(tb.TempDir(), "coachd.db"), clock)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	db.SetBudgetConfig(coachd.BudgetConfig{Unit: unit})
	pack, err := agent.LoadPack(filepath.Join("..", "examples", "sage"), agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		tb.Fatal(err)
	}
	if mod != nil {
		a, _ := pack.Agent("sage")
		mod(a)
	}
	ts, err := agent.NewToolset(tools.ForPack(pack, pack.FileTypes())...)
	if err != nil {
		tb.Fatal(err)
	}
	fake := anthropictest.NewServer()
	tb.Cleanup(fake.Close)
	fake.SetClock(clock)
	u := &coachd.User{Name: "Maya", TokenBudget: 100_000_000}
	if err := db.CreateUser(ctx, u, "hash-sage-bench"); err != nil {
		tb.Fatal(err)
	}
	s := &sageSession{tb: tb, clock: clock, fake: fake, db: db, user: u}
	s.runner = agent.NewRunner(agent.Config{
		Store: db, Tools: ts, Agents: pack.Agent, Clock: clock, BudgetUnit: unit,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1}),
	})
	fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		clock.Advance(3 * time.Second) // a model call takes a while
		if strings.HasPrefix(req.LastUserText(), "Summarize our conversation") {
			return anthropictest.Text("Maya is planning her days around a big presentation, a run she keeps postponing and calls with family.", 20)
		}
		s.mu.Lock()
		i, r := s.turn, s.round
		s.round++
		s.mu.Unlock()
		return sageReply(i, r)
	})
	return s
}

// play runs turn i of the script and returns its result and how many
// model calls it made.
func (s *sageSession) play(i int) (*agent.Result, int) {
	s.tb.Helper()
	s.mu.Lock()
	s.turn, s.round = i, 0
	s.mu.Unlock()
	tr, err := s.runner.Prepare(context.Background(), agent.TurnRequest{User: s.user, SessionID: s.id, Agent: "sage", Message: sageTurns[i]})
	if err != nil {
		s.tb.Fatalf("turn %d: prepare: %v", i, err)
	}
	res := tr.Run(context.Background(), &sink{})
	if res.StopReason != coachd.TurnEndTurn {
		s.tb.Fatalf("turn %d: stop %q (%v)", i, res.StopReason, res.Err)
	}
	s.id = res.SessionID
	s.mu.Lock()
	defer s.mu.Unlock()
	return res, s.round
}

// runSageSession plays the scripted 20-turn Sage session against the
// fake and returns its cost. Between turns the clock moves 4 minutes,
// across a minute boundary, or 20 seconds; each model call takes 3
// seconds. Every turn calls tools (skills, files, notes), some in two
// rounds.
func runSageSession(tb testing.TB) sessionCost {
	tb.Helper()
	s := newSageSession(tb)
	var cost sessionCost
	for i := range sageTurns {
		if i > 0 {
			switch i % 3 {
			case 0:
				s.clock.Advance(4 * time.Minute)
			case 1:
				s.clock.Advance(50 * time.Second) // crosses a minute boundary
			default:
				s.clock.Advance(20 * time.Second)
			}
		}
		res, calls := s.play(i)
		cost.Usage = cost.Usage.Add(res.Usage)
		cost.Calls += calls
	}
	u0 := cost.Usage
	cost.Naive = u0.InputTokens + u0.CacheReadInputTokens + u0.CacheCreationInputTokens
	// Input only, weighted as Claude prices it (pricing.go): a cache read
	// 0.1 of an input token, a 5-minute write 1.25.
	in := u0
	in.OutputTokens = 0
	cost.Billed = coachd.Weighted(anthropic.DefaultModel, in)
	return cost
}

// sageReply is the model's side of the script: each turn calls tools
// (one or two rounds), then answers in a few sentences.
func sageReply(turn, round int) anthropictest.Reply {
	skills := []string{"open-day", "close-day", "decision-helper", "pattern-review", "capture-review"}
	id := func(n int) string { return fmt.Sprintf("toolu_%02d_%d_%d", turn, round, n) }
	log := strings.Repeat(fmt.Sprintf("Turn %d: the user is working through the day, one step at a time. ", turn), 8)
	rounds := 1
	if turn%5 == 4 {
		rounds = 2
	}
	if round >= rounds {
		return anthropictest.Text(fmt.Sprintf("That sounds like real progress (%d). Let's keep the next step small and "+
			"concrete: what would make the next hour feel good? I noted what you said so we can come back to it tonight.", turn), 60)
	}
	var calls []anthropictest.BlockSpec
	switch (turn + round) % 4 {
	case 0:
		calls = append(calls, anthropictest.ToolUse(id(0), "load_skill", fmt.Sprintf(`{"name":%q}`, skills[turn%len(skills)])))
	case 1:
		calls = append(calls, anthropictest.ToolUse(id(0), "save_file",
			fmt.Sprintf(`{"file_type":"daily-log","file_name":"2026-03-02","content":%q}`, log)))
	case 2:
		calls = append(calls, anthropictest.ToolUse(id(0), "read_file", `{"file_type":"daily-log","file_name":"2026-03-02"}`),
			anthropictest.ToolUse(id(1), "list_files", `{}`))
	default:
		calls = append(calls, anthropictest.ToolUse(id(0), "save_note",
			fmt.Sprintf(`{"note_type":"insight","title":"turn %d","content":"The user responds well to small concrete steps.","importance":60}`, turn)))
	}
	if turn == 10 && round == 0 {
		calls = append(calls, anthropictest.ToolUse(id(2), "save_file",
			`{"file_type":"sage-context","content":"Maya: works in marketing, leads presentations from next month, close to her mother and brother."}`))
	}
	return anthropictest.Reply{Blocks: calls}
}

// TestSageSessionCost plays the 20-turn Sage session and checks that the
// prompt cache holds: the billed input is at most 35 % of re-sending the
// whole prompt at full price every round.
func TestSageSessionCost(t *testing.T) {
	c := runSageSession(t)
	t.Logf("calls %d, usage %+v", c.Calls, c.Usage)
	t.Logf("billed input %.0f tokens-equivalent, naive %d: %.1f %%", c.Billed, c.Naive, 100*c.Ratio())
	if c.Ratio() > 0.35 {
		t.Errorf("billed input is %.1f %% of the naive re-send, want at most 35 %%", 100*c.Ratio())
	}
	if c.Calls < 2*len(sageTurns) {
		t.Errorf("%d model calls, want tool rounds in every turn", c.Calls)
	}
}

// TestCacheAcrossTurns: the history written by one turn is read by the
// next when the minute (or the files) changed in between, and written
// again only when the cache expired (more than 5 minutes later).
func TestCacheAcrossTurns(t *testing.T) {
	for _, tt := range []struct {
		name    string
		gap     time.Duration
		rewrite bool
	}{{"MinuteChange", 50 * time.Second, false}, {"FourMinutes", 4 * time.Minute, false}, {"Expired", 6 * time.Minute, true}} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSageSession(t)
			s.play(1) // saves a file: the recent files change
			before := s.clock.Now()
			s.clock.Advance(tt.gap)
			if !tt.rewrite && s.clock.Now().Minute() == before.Minute() {
				t.Fatal("the gap does not cross a minute boundary")
			}
			s.play(2)
			reqs := s.fake.Requests()
			if len(reqs) != 4 {
				t.Fatalf("%d requests, want 2 per turn", len(reqs))
			}
			prev, next := reqs[1].Usage, reqs[2].Usage
			cached := prev.CacheReadInputTokens + prev.CacheCreationInputTokens
			t.Logf("last call of turn 1: %+v; first of turn 2: %+v", prev, next)
			if tt.rewrite {
				if next.CacheCreationInputTokens < cached {
					t.Errorf("after expiry wrote %d, want the whole prefix (%d) again", next.CacheCreationInputTokens, cached)
				}
				return
			}
			if next.CacheReadInputTokens < cached {
				t.Errorf("turn 2 read %d tokens, want at least the %d turn 1 cached", next.CacheReadInputTokens, cached)
			}
			// Only the reply that ended turn 1 and the new message are new.
			if next.CacheCreationInputTokens > 200 {
				t.Errorf("turn 2 wrote %d tokens: the history was re-cached", next.CacheCreationInputTokens)
			}
		})
	}
}

// TestCacheLayoutGolden pins where the breakpoints of a Sage session's
// requests go (coachd.CacheMarks) and where the turn's context sits.
func TestCacheLayoutGolden(t *testing.T) {
	s := newSageSession(t)
	s.play(0)
	s.clock.Advance(50 * time.Second)
	s.play(2) // two parallel tool calls
	var sb strings.Builder
	for i, r := range s.fake.Requests() {
		fmt.Fprintf(&sb, "request %d\n%s", i, layout(t, r.Body))
	}
	got := sb.String()
	golden := filepath.Join("testdata", "cache_layout.golden")
	if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" { // the flag of context_internal_test.go
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./agent -run TestCacheLayoutGolden -update)", err)
	}
	if got != string(want) {
		t.Errorf("layout differs from %s (-update to accept):\n%s", golden, got)
	}
	for i, r := range s.fake.Requests() {
		if n := strings.Count(string(r.Raw), `"cache_control"`); n > coachd.MaxCacheBreakpoints || n < 3 {
			t.Errorf("request %d has %d breakpoints", i, n)
		}
	}
}

// layout describes a request body: one line per block, with its kind, the
// start of its text and whether it carries a breakpoint.
func layout(t *testing.T, body map[string]any) string {
	t.Helper()
	var sb strings.Builder
	line := func(where string, b map[string]any) {
		kind, _ := b["type"].(string)
		if kind == "" {
			kind = "tool " + fmt.Sprint(b["name"])
		}
		text := fmt.Sprint(b["text"])
		if kind != "text" {
			text = ""
		}
		if len(text) > 24 {
			text = text[:24]
		}
		mark := ""
		if b["cache_control"] != nil {
			mark = "  <- cache_control"
		}
		fmt.Fprintf(&sb, "  %s %s %q%s\n", where, kind, strings.ReplaceAll(text, "\n", " "), mark)
	}
	list := func(v any) []map[string]any {
		var out []map[string]any
		items, _ := v.([]any)
		for _, it := range items {
			m, _ := it.(map[string]any)
			out = append(out, m)
		}
		return out
	}
	tools := list(body["tools"])
	for i, b := range tools {
		if i == len(tools)-1 || b["cache_control"] != nil {
			line(fmt.Sprintf("tools[%d/%d]", i, len(tools)), b)
		}
	}
	for i, b := range list(body["system"]) {
		line(fmt.Sprintf("system[%d]", i), b)
	}
	for i, m := range list(body["messages"]) {
		for j, b := range list(m["content"]) {
			line(fmt.Sprintf("messages[%d] %s [%d]", i, m["role"], j), b)
		}
	}
	return sb.String()
}

// BenchmarkSageSessionCost reports the session's billed input against the
// naive re-send (go test ./agent -run '^$' -bench SageSessionCost
// -benchtime 1x).
func BenchmarkSageSessionCost(b *testing.B) {
	var c sessionCost
	for b.Loop() {
		c = runSageSession(b)
	}
	b.ReportMetric(c.Billed, "billed-in-tok")
	b.ReportMetric(float64(c.Naive), "naive-in-tok")
	b.ReportMetric(100*c.Ratio(), "%-of-naive")
}

// TestBilledBudgets: with budgets in tokens-equivalent or money, each
// model call is charged at its price (a cache read a tenth of an input
// token, a write 1.25, output 5 for Sonnet), the ledger carries both the
// billed amount and the raw tokens, and it still balances (coachd doctor).
func TestBilledBudgets(t *testing.T) {
	for _, unit := range []coachd.BudgetUnit{coachd.UnitTokens, coachd.UnitWeighted, coachd.UnitMicroUSD} {
		t.Run(string(unit), func(t *testing.T) {
			s := newSageSessionIn(t, unit, nil)
			var billed, raw int64
			for i := range 3 {
				res, _ := s.play(i)
				billed += res.Billed
				raw += res.Usage.Total()
				s.clock.Advance(time.Minute)
			}
			var want int64
			for _, r := range s.fake.Requests() {
				want += unit.Charge(r.Model, r.Usage)
			}
			if billed != want {
				t.Errorf("billed %d, want %d (each call at its price)", billed, want)
			}
			switch unit {
			case coachd.UnitTokens:
				if billed != raw {
					t.Errorf("tokens budget billed %d, want the raw %d as before", billed, raw)
				}
			case coachd.UnitWeighted:
				if billed >= raw/2 {
					t.Errorf("weighted %d not well under the raw %d: cache reads are billed at a tenth", billed, raw)
				}
			}
			ctx := context.Background()
			rows, err := s.db.Ledger(ctx, s.user.ID)
			if err != nil {
				t.Fatal(err)
			}
			var used, rawRows int64
			for _, e := range rows {
				used += e.Used
				rawRows += e.RawTokens
				if e.Unit != unit {
					t.Errorf("ledger row %d in %q, want %q", e.ID, e.Unit, unit)
				}
			}
			if used != billed || rawRows != raw {
				t.Errorf("ledger used %d raw %d, want %d and %d", used, rawRows, billed, raw)
			}
			st, err := s.db.BudgetStatus(ctx, s.user.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.TokensUsed != billed || st.TokensReserved != 0 {
				t.Errorf("status %+v, want %d used and nothing held", st, billed)
			}
			if drift, err := s.db.CheckLedger(ctx); err != nil || len(drift) > 0 {
				t.Errorf("ledger drift %+v (%v)", drift, err)
			}
		})
	}
}

// TestPreflightCacheBlocks: an app that runs its own loop gets the system
// prompt as the blocks coachd sends, with the same cache markers, the
// turn's context to append after its user message, and the agent's
// sampling settings.
func TestPreflightCacheBlocks(t *testing.T) {
	s := newSageSession(t)
	s.play(0)
	pf, err := s.runner.Preflight(context.Background(), agent.PreflightRequest{User: s.user, SessionID: s.id, Message: "hello again"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.fake.Requests()
	sent, err := json.Marshal(reqs[len(reqs)-1].Body["system"])
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(pf.System)
	if !jsonEqual(sent, got) {
		t.Errorf("preflight system\n%s\nwant what the runner sent\n%s", got, sent)
	}
	if n := strings.Count(string(got), `"cache_control"`); n != 2 {
		t.Errorf("%d breakpoints in the system blocks, want 2 (stable prompt, session context)", n)
	}
	if len(pf.TurnContext) != 1 || !strings.HasPrefix(pf.TurnContext[0].Text, "<turn_context>") {
		t.Errorf("turn context %+v", pf.TurnContext)
	}
	if !strings.Contains(pf.SystemMessage, "<turn_context>") || !strings.Contains(pf.SystemMessage, "You are Sage") {
		t.Errorf("system_message lacks part of the prompt")
	}
	if pf.Temperature == nil || *pf.Temperature != 0.7 || pf.ThinkingBudget != 0 {
		t.Errorf("temperature %v, thinking %d: want the agent's 0.7 and off", pf.Temperature, pf.ThinkingBudget)
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// TestCompaction: a long session's older large tool results are sent
// shortened, and its oldest turns are replaced by a summary the model
// wrote, stored as a message of its own; every request stays valid for the
// API (the fake refuses a broken tool_use/tool_result pairing), the stored
// history stays whole, and the summary call is charged like any other.
func TestCompaction(t *testing.T) {
	s := newSageSessionIn(t, coachd.UnitWeighted, func(a *agent.Agent) {
		a.Compaction = &agent.Compaction{ShortenAfter: 1000, SummarizeAfter: 2000, KeepTurns: 2, ShortenOver: 500}
	})
	var billed int64
	for i := range 12 {
		res, _ := s.play(i)
		billed += res.Billed
		s.clock.Advance(20 * time.Second)
	}
	stored, err := s.db.History(context.Background(), s.user.ID, s.id)
	if err != nil {
		t.Fatal(err)
	}
	summaries := 0
	said := map[string]bool{}
	for _, m := range stored {
		if strings.Contains(string(m.Metadata), `"kind":"summary"`) {
			summaries++
			continue
		}
		said[coachd.BlocksText(m.Blocks)] = true
	}
	if summaries == 0 {
		t.Fatal("no summary stored")
	}
	for i := range 12 {
		if !said[sageTurns[i]] {
			t.Errorf("turn %d's message is gone from the stored history", i)
		}
	}
	reqs := s.fake.Requests()
	var want int64
	shortened, summaryCalls := false, 0
	for _, r := range reqs {
		want += coachd.UnitWeighted.Charge(r.Model, r.Usage)
		shortened = shortened || strings.Contains(string(r.Raw), "shortened for this request")
		if tc, _ := r.Body["tool_choice"].(map[string]any); tc["type"] == "none" {
			summaryCalls++
		}
	}
	if !shortened {
		t.Error("no request sent a shortened tool result")
	}
	if summaryCalls != summaries {
		t.Errorf("%d summary calls for %d summaries", summaryCalls, summaries)
	}
	if billed != want {
		t.Errorf("turns billed %d, want %d: every call, the summaries' too", billed, want)
	}
	last := reqs[len(reqs)-1].Messages()
	if first := coachd.BlocksText(last[0].Blocks); !strings.HasPrefix(first, "<conversation_summary>") {
		t.Errorf("the last request starts with %.60q, want the summary", first)
	}
	if strings.Contains(string(reqs[len(reqs)-1].Raw), sageTurns[0]) {
		t.Error("the first turn is still sent after it was summarized")
	}
}
