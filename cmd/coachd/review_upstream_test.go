package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReviewCommandUpstreamError: when the coach's model refuses the key,
// coachd review fails with that error, not with "not approved" (the exit
// status and message of a review that gave feedback).
func TestReviewCommandUpstreamError(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Status(401, nil, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	})
	dir := t.TempDir()
	env := getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "wrong", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_DB": filepath.Join(dir, "coachd.db")})
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	args := []string{"coachd", "review", "--requirements", filepath.Join(autobuildDir, "sample", "REQUIREMENTS.md"),
		"--workspace", ws, "--task-id", "TASK-x"}
	out, errOut := &syncBuffer{}, &syncBuffer{}
	err := run(context.Background(), args, env, out, errOut)
	if errors.Is(err, errNotApproved) || coachd.ErrorCode(err) != coachd.EUPSTREAMAUTH {
		t.Fatalf("err %v (code %q)\nstdout %s\nstderr %s", err, coachd.ErrorCode(err), out, errOut)
	}
}
