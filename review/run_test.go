package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

var packDir = filepath.Join("..", "examples", "autobuild")

// env is the examples/autobuild pack served by a runner over a real SQLite
// file, the SDK talking to the fake Anthropic server.
type env struct {
	fake *anthropictest.Server
	db   *sqlstore.DB
	rv   *review.Reviewer
	user *coachd.User
}

func newEnv(t *testing.T) *env {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test in workspaces")
	}
	ctx := context.Background()
	p, err := agent.LoadPack(packDir, agent.PackOptions{Builtins: append(tools.Builtins(), review.Unbound()...)})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := agent.NewToolset(append(tools.ForPack(p, p.FileTypes()), review.Unbound()...)...)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "coachd.db"), coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	fake := anthropictest.NewServer()
	t.Cleanup(fake.Close)
	runner := agent.NewRunner(agent.Config{
		Store: db, Tools: ts, Agents: p.Agent,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true}),
	})
	u := &coachd.User{Name: "dev", TokenBudget: 10_000_000}
	if err := db.CreateUser(ctx, u, "hash-"+t.Name()); err != nil {
		t.Fatal(err)
	}
	return &env{fake: fake, db: db, user: u, rv: &review.Reviewer{Runner: runner, Store: db, Agents: p.Agents}}
}

// scratchBase is a new directory for autobuild's scratch copies under the
// user's cache directory: not the shared temporary directory, which
// autobuild refuses (TestAutobuildScratchNotShared).
func scratchBase(t *testing.T) string {
	t.Helper()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory for autobuild's scratch copies: %v", err)
	}
	if err := os.MkdirAll(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(cache, "coachd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// sample copies examples/autobuild/sample (Slugify with its bug) into a
// temp dir; fixed replaces slug.go with a correct one.
func sample(t *testing.T, fixed bool) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"go.mod", "slug.go", "slug_test.go", "REQUIREMENTS.md"} {
		b, err := os.ReadFile(filepath.Join(packDir, "sample", f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	if fixed {
		os.WriteFile(filepath.Join(dir, "slug.go"), []byte(fixedSlug), 0o644)
	}
	return dir
}

// fixedSlug is a correct slug.go (also used by cmd/coachd's tests).
var fixedSlug = func() string {
	b, err := os.ReadFile(filepath.Join("testdata", "slug_fixed.go.txt"))
	if err != nil {
		panic(err)
	}
	return string(b)
}()

var requirements = []string{"Slugify lowercases", "runs of non-alphanumerics become one hyphen", "no leading or trailing hyphen"}

// step is the number of tool rounds so far in this request's conversation.
func step(req *anthropictest.Request) int { return (len(req.Messages()) - 1) / 2 }

func lastResult(req *anthropictest.Request) coachd.Block {
	rs := req.ToolResults()
	if len(rs) == 0 {
		return coachd.Block{}
	}
	return rs[len(rs)-1]
}

func isPlayer(req *anthropictest.Request) bool {
	b, _ := json.Marshal(req.Body["system"])
	return strings.Contains(string(b), "PLAYER")
}

func decisionJSON(decision string) string {
	if decision == "approve" {
		return `{"task_id":"TASK-001","decision":"approve","rationale":"All requirements verified; go test passes.",` +
			`"requirements_verified":[{"requirement":"Slugify lowercases","status":"met","evidence":"TestSlugify passes"},` +
			`{"requirement":"runs of non-alphanumerics become one hyphen","status":"met","evidence":"TestSlugify: a--b__c gives a-b-c"},` +
			`{"requirement":"no leading or trailing hyphen","status":"met","evidence":"TestSlugify: -a- gives a"}],` +
			`"tests_verified":{"total":1,"passed":1,"failed":0},` +
			`"contracts_honored":{"validate_implementation_called":true,"record_decision_called":true,"independent_verification":true}}`
	}
	return `{"task_id":"TASK-001","decision":"feedback","rationale":"Runs of separators are not collapsed.",` +
		`"tests_verified":{"total":1,"passed":0,"failed":1},` +
		`"feedback_items":[{"severity":"high","file":"slug.go","line":12,"issue":"Every separator becomes its own hyphen: a--b__c gives a--b--c","suggestion":"Write one hyphen per run of separators, none at the ends"}]}`
}

// coach plays the seed's coach honestly: validate, run the tests, decide
// from what they said, answer with the decision.
func coach(req *anthropictest.Request) anthropictest.Reply { return coachAt(0)(req) }

// coachAt is coach starting after offset rounds of something else.
func coachAt(offset int) func(*anthropictest.Request) anthropictest.Reply {
	return func(req *anthropictest.Request) anthropictest.Reply { return honest(req, step(req)-offset) }
}

func honest(req *anthropictest.Request, step int) anthropictest.Reply {
	switch step {
	case 0:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_v", "validate_implementation",
			`{"task_id":"TASK-001","requirements":["Slugify lowercases"],"player_report":{"files_modified":["slug.go"]}}`))
	case 1:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_r", "run_command", `{"command":"go test ./..."}`))
	case 2:
		d := "feedback"
		if r := lastResult(req); strings.Contains(r.ResultText(), `"exit_code":0`) {
			d = "approve"
		}
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_d", "record_decision", decisionJSON(d)))
	}
	var in struct{ Decision string }
	json.Unmarshal([]byte(lastResult(req).ResultText()), &in)
	return anthropictest.Text(decisionJSON(in.Decision), 40)
}

func (e *env) review(t *testing.T, dir string) (*coachd.Review, *agent.Result) {
	t.Helper()
	run, err := e.rv.Prepare(context.Background(), review.Request{User: e.user, TaskID: "TASK-001", Requirements: requirements,
		PlayerReport: json.RawMessage(`{"files_modified":["slug.go"],"tests_written":["TestSlugify"]}`), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rev, res, err := run.Do(context.Background(), nopSink{})
	if err != nil {
		t.Fatal(err)
	}
	return rev, res
}

type nopSink struct{}

func (nopSink) Send(coachd.Event) error { return nil }

func TestReviewApprove(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(coach)
	rev, res := e.review(t, sample(t, true))
	if !rev.Approved || res.StopReason != coachd.TurnEndTurn || !strings.Contains(string(rev.Decision), `"decision":"approve"`) {
		t.Fatalf("review %+v stop %s", rev, res.StopReason)
	}
	hist, _, err := e.db.ListReviews(context.Background(), e.user.ID, "TASK-001", coachd.Page{})
	if err != nil || len(hist) != 1 || hist[0].ID != rev.ID {
		t.Fatalf("history %v %v", hist, err)
	}
	for _, want := range []string{`"coach_validate_start"`, `"coach_decision"`, `"tool":"run_command"`, `"duration_ms"`, `"packages_ok":1`} {
		if !strings.Contains(string(hist[0].Trace), want) {
			t.Errorf("stored trace lacks %s: %s", want, hist[0].Trace)
		}
	}
}

func TestReviewFeedback(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(coach)
	rev, _ := e.review(t, sample(t, false))
	var d struct {
		Decision string
		Items    []struct {
			File string
			Line int
		} `json:"feedback_items"`
	}
	if err := json.Unmarshal(rev.Decision, &d); err != nil || rev.Approved || d.Decision != "feedback" || d.Items[0].File != "slug.go" || d.Items[0].Line != 12 {
		t.Fatalf("review %+v: %s", rev, rev.Decision)
	}
	if !strings.Contains(string(rev.Trace), `"coach_feedback"`) || !strings.Contains(string(rev.Trace), `"exit_code":1`) {
		t.Fatalf("trace %s", rev.Trace)
	}
}

// A coach that will not run the tests cannot approve: every attempt is
// refused, and the review ends with no decision.
func TestReviewApproveWithoutTestsRefused(t *testing.T) {
	e := newEnv(t)
	var refusals []string
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if step(req) == 0 {
			return coach(req)
		}
		if r := lastResult(req); r.IsError {
			refusals = append(refusals, r.ResultText())
		}
		return anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_a%d", step(req)), "record_decision", decisionJSON("approve")))
	})
	rev, res := e.review(t, sample(t, true))
	if rev.Approved || rev.Decision != nil {
		t.Fatalf("approved without running tests: %+v (%s)", rev, res.StopReason)
	}
	t.Logf("stop %s, refusals %q", res.StopReason, refusals)
	if len(refusals) == 0 || !strings.Contains(refusals[0], "has not run the tests") {
		t.Fatalf("refusals %q", refusals)
	}
}

// A decision before validation is refused by the ordered contract; the
// coach then does it in order and its decision stands.
func TestReviewOrder(t *testing.T) {
	e := newEnv(t)
	var first coachd.Block
	then := coachAt(1)
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		switch step(req) {
		case 0:
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_early", "record_decision", decisionJSON("feedback")))
		case 1:
			first = lastResult(req)
		}
		return then(req)
	})
	rev, _ := e.review(t, sample(t, false))
	t.Logf("first: %s", first.ResultText())
	if !first.IsError || !strings.Contains(first.ResultText(), "validate_implementation") {
		t.Fatalf("early decision not refused: %+v", first)
	}
	if rev.Decision == nil || !strings.Contains(string(rev.Decision), `"decision":"feedback"`) {
		t.Fatalf("decision after the repair: %s", rev.Decision)
	}
}

// player fixes the bug once the coach has given feedback fixAfter times;
// before that it only adds a comment. It reports after each change.
func player(fixAfter int) func(*anthropictest.Request) anthropictest.Reply {
	return func(req *anthropictest.Request) anthropictest.Reply {
		if len(req.ToolResults()) > 0 {
			return anthropictest.Text(`Done. {"files_modified":["slug.go"],"tests_written":[],"implementation_notes":"see slug.go","concerns":[]}`, 30)
		}
		feedback := 0
		for _, m := range req.Messages() {
			if m.Role == coachd.RoleUser && strings.Contains(coachd.BlocksText(m.Blocks), "## Coach feedback") {
				feedback++
			}
		}
		id := fmt.Sprintf("toolu_p%d", len(req.Messages()))
		if feedback >= fixAfter {
			in, _ := json.Marshal(map[string]string{"path": "slug.go", "content": fixedSlug})
			return anthropictest.Blocks(anthropictest.ToolUse(id, "write_file", string(in)))
		}
		return anthropictest.Blocks(anthropictest.ToolUse(id, "edit_file",
			`{"path":"slug.go","old_text":"// Package slug","new_text":"// Package slug (reviewed)\n// Package slug"}`))
	}
}

func build(e *env, fixAfter int) func(*anthropictest.Request) anthropictest.Reply {
	p := player(fixAfter)
	return func(req *anthropictest.Request) anthropictest.Reply {
		if isPlayer(req) {
			return p(req)
		}
		return coach(req)
	}
}

func TestAutobuildConverges(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(build(e, 1))
	src := sample(t, false)
	b := &review.Build{Reviewer: e.rv, MaxTurns: 5}
	res, err := b.Run(context.Background(), e.user, "TASK-001", requirements, src, scratchBase(t))
	if err != nil {
		t.Fatal(err)
	}
	if !res.Approved || res.Turns != 2 || len(res.Reviews) != 2 || res.Reviews[0].Approved || !res.Reviews[1].Approved {
		t.Fatalf("build %+v", res)
	}
	if !strings.Contains(res.Diff, "+\tdash := false") || !strings.Contains(res.Diff, "+++ b/slug.go") {
		t.Fatalf("diff:\n%s", res.Diff)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "slug.go")); strings.Contains(string(b), "dash") {
		t.Fatal("the original workspace was changed")
	}
	hist, _, _ := e.db.ListReviews(context.Background(), e.user.ID, "TASK-001", coachd.Page{})
	if len(hist) != 2 {
		t.Fatalf("history has %d reviews", len(hist))
	}
}

func TestAutobuildStopsAtMaxTurns(t *testing.T) {
	e := newEnv(t)
	e.fake.SetScript(build(e, 99))
	b := &review.Build{Reviewer: e.rv, MaxTurns: 3}
	res, err := b.Run(context.Background(), e.user, "TASK-001", requirements, sample(t, false), scratchBase(t))
	if err != nil {
		t.Fatal(err)
	}
	if res.Approved || res.Turns != 3 || len(res.Reviews) != 3 {
		t.Fatalf("build %+v", res)
	}
	for _, r := range res.Reviews {
		if r.Approved || !strings.Contains(string(r.Decision), `"feedback"`) {
			t.Fatalf("review %s", r.Decision)
		}
	}
}
