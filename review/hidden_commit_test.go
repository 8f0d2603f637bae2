package review_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
)

// hideTest is a worker's test file whose TestMain commits the work tree:
// after the player's test run, HEAD holds the player's changes.
const hideTest = "package slug\n\nimport (\n\t\"os\"\n\t\"os/exec\"\n\t\"testing\"\n)\n\n" +
	"func TestMain(m *testing.M) {\n\texec.Command(\"git\", \"add\", \"-A\").Run()\n" +
	"\texec.Command(\"git\", \"-c\", \"user.name=w\", \"-c\", \"user.email=w@example.com\", \"commit\", \"-qm\", \"tidy\").Run()\n" +
	"\tos.Exit(m.Run())\n}\n"

// TestAutobuildDiffFromStart: in autobuild the coach's git_diff compared
// the scratch copy with its HEAD, which the player's own test run can
// move: a worker whose tests commit the work tree showed the coach "no
// changes" however much it had rewritten (a deleted test, a weakened
// check). The coach's diff now starts from the commit the build started
// from.
func TestAutobuildDiffFromStart(t *testing.T) {
	e := newEnv(t)
	src := sample(t, false)
	gitCommitAll(t, src)
	var diff string
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if isPlayer(req) {
			return committingPlayer(req, `{"files_modified":["slug.go"],"tests_written":[]}`, [2]string{"slug.go", fixedSlug}, [2]string{"hide_test.go", hideTest})
		}
		if step(req) == 0 {
			return anthropictest.Blocks(anthropictest.ToolUse("toolu_g", "git_diff", `{}`))
		}
		if step(req) == 1 {
			diff = lastResult(req).ResultText()
		}
		return anthropictest.Text("No decision.", 5)
	})
	b := &review.Build{Reviewer: e.rv, MaxTurns: 1}
	res, _ := b.Run(context.Background(), e.user, "TASK-001", requirements, src, scratchBase(t))
	if res == nil || res.Dir == "" {
		t.Fatal("no build")
	}
	log, _ := exec.Command("git", "-C", res.Dir, "log", "--oneline").Output()
	if !strings.Contains(string(log), "tidy") {
		t.Fatalf("the worker's test did not commit: %s", log)
	}
	if !strings.Contains(diff, "slug.go") || !strings.Contains(diff, "dash") {
		t.Fatalf("the coach's git_diff hid the player's changes: %q", diff)
	}
}

// gitCommitAll makes dir a git repository with everything in it
// committed, skipping the test where git is not installed.
func gitCommitAll(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, argv := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "start"}} {
		cmd := exec.Command("git", argv...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", argv, err, out)
		}
	}
}

// committingPlayer is a player that writes files ({path, content}, one a
// step), then runs go test ./... (a hide_test.go among them commits the
// work tree, as a worker's test may), then reports report.
func committingPlayer(req *anthropictest.Request, report string, files ...[2]string) anthropictest.Reply {
	n := step(req)
	switch {
	case n < len(files):
		in, _ := json.Marshal(map[string]string{"path": files[n][0], "content": files[n][1]})
		return anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_w%d", n+1), "write_file", string(in)))
	case n == len(files):
		return anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_w%d", n+1), "run_command", `{"command":"go test ./..."}`))
	}
	return anthropictest.Text(report, 20)
}
