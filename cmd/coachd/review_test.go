package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

var autobuildDir = filepath.Join("..", "..", "examples", "autobuild")

// coachScript validates, runs go test and records what the exit code says.
func coachScript(req *anthropictest.Request) anthropictest.Reply {
	decision := `{"task_id":"TASK-x","decision":"feedback","rationale":"Tests fail.","feedback_items":[{"severity":"high","file":"slug.go","line":12,"issue":"runs of separators are not collapsed","suggestion":"collapse them"}]}`
	rs := req.ToolResults()
	step := (len(req.Messages()) - 1) / 2
	if step >= 2 && strings.Contains(rs[0].ResultText(), `"exit_code":0`) || step >= 3 && strings.Contains(rs[0].ResultText(), `"is_approved":true`) {
		decision = `{"task_id":"TASK-x","decision":"approve","rationale":"Tests pass.","requirements_verified":[` +
			`{"requirement":"Slugify lowercases its input","status":"met","evidence":"TestSlugify passes"},` +
			`{"requirement":"Every run of characters that are not ASCII letters or digits becomes a single hyphen","status":"met","evidence":"TestSlugify passes"},` +
			`{"requirement":"A slug never starts or ends with a hyphen","status":"met","evidence":"TestSlugify passes"},` +
			`{"requirement":"The tests in slug_test.go pass","status":"met","evidence":"go test ./... exits 0"}]}`
	}
	switch step {
	case 0:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_v", "validate_implementation", `{"task_id":"TASK-x","requirements":["slugs"]}`))
	case 1:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_r", "run_command", `{"command":"go test ./..."}`))
	case 2:
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_d", "record_decision", decision))
	}
	return anthropictest.Text(decision, 40)
}

func TestReviewCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a workspace")
	}
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.SetScript(coachScript)
	dir := t.TempDir()
	// Any user may write the directory above the workspace: a warning.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	env := getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_DB": filepath.Join(dir, "coachd.db")})
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	for _, f := range []string{"go.mod", "slug.go", "slug_test.go"} {
		b, _ := os.ReadFile(filepath.Join(autobuildDir, "sample", f))
		os.WriteFile(filepath.Join(ws, f), b, 0o644)
	}
	args := []string{"coachd", "review", "--requirements", filepath.Join(autobuildDir, "sample", "REQUIREMENTS.md"),
		"--workspace", ws, "--task-id", "TASK-x"}

	out, errOut := &syncBuffer{}, &syncBuffer{}
	err := run(context.Background(), args, env, out, errOut)
	if !errors.Is(err, errNotApproved) || !strings.Contains(out.String(), `"decision": "feedback"`) || !strings.Contains(errOut.String(), "→ run_command") {
		t.Fatalf("buggy workspace: err %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	if !strings.Contains(errOut.String(), "coachd review: warning: the workspace") || !strings.Contains(errOut.String(), dir+" may be written by other users") {
		t.Errorf("no warning of the shared directory above the workspace:\n%s", errOut)
	}
	// The coach saw the requirements file, one requirement per line.
	if brief := fake.Requests()[0].LastUserText(); !strings.Contains(brief, "4. The tests in slug_test.go pass") || !strings.Contains(brief, "## Task: TASK-x") {
		t.Fatalf("brief:\n%s", brief)
	}

	fixed, _ := os.ReadFile(filepath.Join("..", "..", "review", "testdata", "slug_fixed.go.txt"))
	os.WriteFile(filepath.Join(ws, "slug.go"), fixed, 0o644)
	out, errOut = &syncBuffer{}, &syncBuffer{}
	if err := run(context.Background(), args, env, out, errOut); err != nil || !strings.Contains(out.String(), `"decision": "approve"`) {
		t.Fatalf("fixed workspace: err %v\nstdout %s\nstderr %s", err, out, errOut)
	}

	if err := run(context.Background(), []string{"coachd", "review", "--pack", autobuildDir}, env, out, errOut); !errors.Is(err, errUsage) {
		t.Fatalf("missing flags: %v", err)
	}
}

func TestPackValidateAutobuild(t *testing.T) {
	out := &syncBuffer{}
	if err := run(context.Background(), []string{"coachd", "pack", "list", autobuildDir}, getenvFrom(nil), out, out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"autobuild-coach", "autobuild-player", "run_command", "record_decision", "validate_implementation"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("pack list lacks %s:\n%s", want, out)
		}
	}
}

func TestAutobuildCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test in a workspace")
	}
	fake := anthropictest.NewServer()
	defer fake.Close()
	fixed, _ := os.ReadFile(filepath.Join("..", "..", "review", "testdata", "slug_fixed.go.txt"))
	fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if sys, _ := json.Marshal(req.Body["system"]); !strings.Contains(string(sys), "PLAYER") {
			return coachScript(req)
		}
		if len(req.ToolResults()) > 0 {
			return anthropictest.Text(`{"files_modified":["slug.go"],"tests_written":[]}`, 20)
		}
		in, _ := json.Marshal(map[string]string{"path": "slug.go", "content": string(fixed)})
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_w", "write_file", string(in)))
	})
	dir := t.TempDir()
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory for autobuild's scratch copies: %v", err)
	}
	os.MkdirAll(cache, 0o700)
	scratch, err := os.MkdirTemp(cache, "coachd-test-") // not under the shared /tmp, which autobuild refuses
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(scratch)
	env := getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_DB": filepath.Join(dir, "coachd.db"), "COACHD_SCRATCH": scratch})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	err = run(context.Background(), []string{"coachd", "autobuild", "--pack", autobuildDir, "--task-id", "TASK-x",
		"--requirements", filepath.Join(autobuildDir, "sample", "REQUIREMENTS.md"), "--workspace", filepath.Join(autobuildDir, "sample"), "--max-turns", "2"}, env, out, errOut)
	if err != nil || !strings.Contains(out.String(), "# approved") || !strings.Contains(out.String(), "+++ b/slug.go") || !strings.Contains(out.String(), "(1 turn(s))") {
		t.Fatalf("err %v\nstdout %s\nstderr %s", err, out, errOut)
	}
}
