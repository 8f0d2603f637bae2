package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/internal/syncbuf"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
)

// reviewEnv serves examples/autobuild with reviews over a workspaces root
// holding "sample" (the example project, its bug included).
func reviewEnv(t *testing.T) (*chatEnv, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs go test in a workspace")
	}
	packDir := filepath.Join("..", "examples", "autobuild")
	p, err := agent.LoadPack(packDir, agent.PackOptions{Builtins: append(tools.Builtins(), review.Unbound()...)})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := agent.NewToolset(append(tools.ForPack(p, p.FileTypes()), review.Unbound()...)...)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()

	db := mustDB(t, filepath.Join(t.TempDir(), "coachd.db"), nil)
	fake := anthropictest.NewServer()
	logs := &syncbuf.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	runner := agent.NewRunner(agent.Config{Store: db, Tools: ts, Logger: logger, Agents: p.Agent,
		Model: anthropic.New(anthropic.Config{APIKey: "test", BaseURL: fake.URL(), MaxRetries: -1, NoCache: true})})
	srv := httptest.NewServer(server.New(server.Deps{Store: db, Logger: logger, AdminKey: adminKey, Runner: runner, Pack: p,
		Heartbeat: time.Hour, Reviews: &review.Reviewer{Runner: runner, Store: db, Root: root, Agents: p.Agents}}))
	t.Cleanup(func() {
		srv.Close()
		fake.Close()
	})
	e := &env{t: t, db: db, url: srv.URL, logs: logs, admin: client.New(srv.URL, adminKey, srv.Client())}
	e.alice = e.MustUser("alice")
	e.bob = e.MustUser("bob")
	// Alice's workspaces; bob has a directory of his own, empty.
	mine := filepath.Join(root, e.alice.ID)
	os.MkdirAll(filepath.Join(mine, "sample"), 0o755)
	for _, f := range []string{"go.mod", "slug.go", "slug_test.go"} {
		b, _ := os.ReadFile(filepath.Join(packDir, "sample", f))
		os.WriteFile(filepath.Join(mine, "sample", f), b, 0o644)
	}
	os.Symlink(t.TempDir(), filepath.Join(mine, "escape"))
	os.MkdirAll(filepath.Join(root, e.bob.ID), 0o755)
	os.Symlink(filepath.Join(mine, "sample"), filepath.Join(root, e.bob.ID, "alices"))
	fake.SetScript(honestCoach)
	return &chatEnv{env: e, fake: fake}, root
}

// honestCoach validates, runs the tests, decides from their exit code and
// answers with its decision.
func honestCoach(req *anthropictest.Request) anthropictest.Reply {
	decision := func(approve bool) string {
		if approve {
			return `{"task_id":"TASK-7","decision":"approve","rationale":"Tests pass."}`
		}
		return `{"task_id":"TASK-7","decision":"feedback","rationale":"Tests fail.","feedback_items":[{"severity":"high","file":"slug.go","line":12,"issue":"separators are not collapsed into one hyphen","suggestion":"collapse runs"}]}`
	}
	rs := req.ToolResults()
	switch (len(req.Messages()) - 1) / 2 {
	case 0:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_v", "validate_implementation", `{"task_id":"TASK-7","requirements":["slugs"]}`))
	case 1:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_r", "run_command", `{"command":"go test ./..."}`))
	case 2:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_d", "record_decision", decision(strings.Contains(rs[0].ResultText(), `"exit_code":0`))))
	}
	return anthropictest.Text(decision(strings.Contains(rs[0].ResultText(), `"is_approved":true`)), 50)
}

const reviewBody = `{"task_id":"TASK-7","requirements":["Slugify collapses separators"],"player_report":{"files_modified":["slug.go"]},"workspace":%q}`

func TestReviews(t *testing.T) {
	e, _ := reviewEnv(t)
	var got struct {
		coachd.Review
		StopReason string `json:"stop_reason"`
	}
	r := e.post(e.alice.key, "/v1/reviews", fmt.Sprintf(reviewBody, "sample"), nil, &got)
	if r.status != 200 || got.Approved || got.StopReason != "end_turn" || !strings.Contains(string(got.Decision), `"line":12`) || r.header.Get("X-Coachd-Session-Id") == "" {
		t.Fatalf("POST /v1/reviews: %d %s", r.status, r.body)
	}

	// Streamed: the coach's turn, then the review.
	r = e.post(e.alice.key, "/v1/reviews?stream=true", fmt.Sprintf(reviewBody, "sample"), nil, nil)
	body := string(r.body)
	iCall, iEnd, iReview := strings.Index(body, "event: function_call"), strings.Index(body, "event: message_end"), strings.Index(body, "event: review")
	if r.status != 200 || iCall < 0 || iEnd < iCall || iReview < iEnd || !strings.Contains(body[iReview:], `"is_approved":false`) {
		t.Fatalf("stream %d:\n%s", r.status, body)
	}

	r = e.do(request{method: "GET", path: "/v1/reviews/TASK-7/history", key: e.alice.key})
	var hist struct {
		TaskID  string           `json:"task_id"`
		Reviews []*coachd.Review `json:"reviews"`
	}
	if json.Unmarshal(r.body, &hist); r.status != 200 || len(hist.Reviews) != 2 || hist.Reviews[0].ID != got.ID {
		t.Fatalf("history %d %s", r.status, r.body)
	}
	for _, want := range []string{"coach_validate_start", "coach_decision", "coach_feedback", `"tool":"run_command"`, `"duration_ms"`} {
		if !strings.Contains(string(hist.Reviews[0].Trace), want) {
			t.Errorf("trace lacks %s: %s", want, hist.Reviews[0].Trace)
		}
	}
	// Bob sees none of it.
	r = e.do(request{method: "GET", path: "/v1/reviews/TASK-7/history", key: e.bob.key})
	if r.status != 200 || !strings.Contains(string(r.body), `"reviews":[]`) {
		t.Fatalf("bob's history %d %s", r.status, r.body)
	}
	// The coach is internal: no user key chats with it directly.
	r = e.post(e.alice.key, "/v1/chat", `{"message":"approve please","agent":"autobuild-coach"}`, nil, nil)
	if r.status != 403 {
		t.Fatalf("chat with the internal coach: %d %s", r.status, r.body)
	}
}

func TestReviewsRefused(t *testing.T) {
	e, _ := reviewEnv(t)
	before := len(e.fake.Requests())
	for ws, want := range map[string]int{
		"../sample": 400, "/etc": 400, "sample/../../x": 400, "escape": 400, "missing": 404, "": 400,
	} {
		r := e.post(e.alice.key, "/v1/reviews", fmt.Sprintf(reviewBody, ws), nil, nil)
		if r.status != want {
			t.Errorf("workspace %q: %d %s, want %d", ws, r.status, r.body, want)
		}
	}
	// Workspaces are each user's own: bob can name neither alice's
	// "sample" nor a link to it, and carol has no directory at all.
	carol := e.MustUser("carol")
	for _, c := range []struct {
		key, ws string
		want    int
	}{{e.bob.key, "sample", 404}, {e.bob.key, "alices", 400}, {carol.key, "sample", 404}, {e.bob.key, "../" + e.alice.ID + "/sample", 400}} {
		if r := e.post(c.key, "/v1/reviews", fmt.Sprintf(reviewBody, c.ws), nil, nil); r.status != c.want {
			t.Errorf("another user's workspace %q: %d %s, want %d", c.ws, r.status, r.body, c.want)
		}
	}
	for _, body := range []string{
		`{"task_id":"../x","requirements":["r"],"workspace":"sample"}`,
		`{"task_id":"T","requirements":[],"workspace":"sample"}`,
		`{"task_id":"T","requirements":["r"],"player_report":"done, trust me","workspace":"sample"}`,
	} {
		if r := e.post(e.alice.key, "/v1/reviews", body, nil, nil); r.status != 400 {
			t.Errorf("%s: %d %s", body, r.status, r.body)
		}
	}
	if r := e.post(e.alice.key, "/v1/reviews?stream=yes", fmt.Sprintf(reviewBody, "sample"), nil, nil); r.status != 400 {
		t.Errorf("stream=yes: %d", r.status)
	}
	if n := len(e.fake.Requests()); n != before {
		t.Fatalf("refused reviews reached the model %d times", n-before)
	}
	off := MustChatEnv(t, nil)
	if r := off.post(off.alice.key, "/v1/reviews", fmt.Sprintf(reviewBody, "sample"), nil, nil); r.status != 403 || !strings.Contains(string(r.body), "--workspaces") {
		t.Fatalf("reviews off: %d %s", r.status, r.body)
	}
}

// TestReviewsPerUserCap: a user has at most server.MaxReviewsPerUser
// reviews running (each runs the worker's tests); one more is refused
// with 429, another user is not held back, and a review that ended gives
// its place back.
func TestReviewsPerUserCap(t *testing.T) {
	e, root := reviewEnv(t)
	os.MkdirAll(filepath.Join(root, e.bob.ID, "own"), 0o755)
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("Reading the workspace first.", 3).StallAfter(1)
	})
	var wg sync.WaitGroup
	defer wg.Wait()
	// start runs a streamed review until its cancel.
	start := func(key, ws string) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", e.url+"/v1/reviews?stream=true", strings.NewReader(fmt.Sprintf(reviewBody, ws)))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			if res, err := http.DefaultClient.Do(req); err == nil {
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
		return cancel
	}
	var alices []context.CancelFunc
	for range server.MaxReviewsPerUser {
		alices = append(alices, start(e.alice.key, "sample"))
	}
	defer func() {
		for _, c := range alices {
			c()
		}
	}()
	waitFor(t, func() bool { return len(e.fake.Requests()) == server.MaxReviewsPerUser })
	// An unknown agent is refused past the cap, with 404.
	probe := `{"task_id":"TASK-7","requirements":["r"],"workspace":"sample","agent":"no-such-coach"}`
	if r := e.post(e.alice.key, "/v1/reviews", probe, nil, nil); r.status != 429 || r.errorCode() != "rate_limit_exceeded" {
		t.Fatalf("a review past the cap: %d %s", r.status, r.body)
	}
	// Bob's review starts (and stalls like the others).
	defer start(e.bob.key, "own")()
	waitFor(t, func() bool { return len(e.fake.Requests()) == server.MaxReviewsPerUser+1 })
	// One of alice's ends: her next one gets past the cap.
	alices[0]()
	waitFor(t, func() bool { return e.post(e.alice.key, "/v1/reviews", probe, nil, nil).status == 404 })
}
