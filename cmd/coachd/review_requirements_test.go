package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReviewCommandRequirementsBounds: a requirements file the coach's
// validate_implementation cannot take (more than 100 requirements, or one
// over 2000 characters: its schema, and POST /v1/reviews's bounds) is
// refused before the coach runs. It ran: every validate_implementation
// call was refused, and the review spent its rounds and tokens to end
// with no decision.
func TestReviewCommandRequirementsBounds(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.SetScript(coachScript)
	dir := t.TempDir()
	env := getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_DB": filepath.Join(dir, "coachd.db")})
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	var many strings.Builder
	for i := range 101 {
		fmt.Fprintf(&many, "- requirement %d\n", i+1)
	}
	for name, text := range map[string]string{
		"many.md": many.String(),
		"long.md": "- " + strings.Repeat("x", 2001) + "\n",
	} {
		reqs := filepath.Join(dir, name)
		os.WriteFile(reqs, []byte(text), 0o644)
		out, errOut := &syncBuffer{}, &syncBuffer{}
		err := run(context.Background(), []string{"coachd", "review", "--requirements", reqs, "--workspace", ws, "--task-id", "TASK-x"}, env, out, errOut)
		if err == nil || errors.Is(err, errNotApproved) || !strings.Contains(err.Error(), "requirement") {
			t.Errorf("%s: err %v\nstdout %s\nstderr %s", name, err, out, errOut)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the coach ran %d model calls over requirements it cannot validate", n)
	}
}
