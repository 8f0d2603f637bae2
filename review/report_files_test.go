package review_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/review"
)

// TestApprovalReadsTheRequestsReport: the files a review's request says
// the player changed are the request's, not what the coach's model
// passes on to validate_implementation. A report naming slug.go and
// app/b.py, relayed as slug.go alone, had the review check slug.go's
// package only: go test passed and the approval was recorded with the
// Python change untested (the workspace is not a git repository, so
// nothing else showed it).
func TestApprovalReadsTheRequestsReport(t *testing.T) {
	e := newEnv(t)
	var mu sync.Mutex
	told := "" // what the model was told of its decision
	e.fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if step(req) == 3 {
			mu.Lock()
			told = lastResult(req).ResultText()
			mu.Unlock()
		}
		return coach(req) // validate_implementation with files_modified [slug.go], go test ./..., approve
	})
	dir := sample(t, true)
	for name, content := range map[string]string{"app/b.py": "def b():\n    return 2\n", "tests/test_b.py": "from app.b import b\n\ndef test_b():\n    assert b() == 2\n"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run, err := e.rv.Prepare(context.Background(), review.Request{User: e.user, TaskID: "TASK-001", Requirements: requirements,
		PlayerReport: json.RawMessage(`{"files_modified":["slug.go","app/b.py"]}`), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	rev, _, err := run.Do(context.Background(), nopSink{})
	if err != nil {
		t.Fatal(err)
	}
	if rev.Approved {
		t.Fatalf("approved with app/b.py, which the request reports changed, untested: %s", rev.Decision)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(told, "approval refused") || !strings.Contains(told, "app/b.py") {
		t.Errorf("the model was told %q, want the approval refused naming app/b.py", told)
	}
}
