package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReviewCommandPlayerReportShape: --player-report took any JSON
// object (and null), its files_modified in any shape: a report the
// coach's check of what the test runs must cover could not read was
// taken silently. It is now checked as POST /v1/reviews checks it, and
// refused, naming the field, before the coach runs.
func TestReviewCommandPlayerReportShape(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	fake.SetScript(coachScript)
	dir := t.TempDir()
	env := getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_DB": filepath.Join(dir, "coachd.db")})
	ws := filepath.Join(dir, "ws")
	os.MkdirAll(ws, 0o755)
	reqs := filepath.Join(dir, "REQUIREMENTS.md")
	os.WriteFile(reqs, []byte("- Slugify lowercases\n"), 0o644)
	for report, field := range map[string]string{
		`{"files_modified":"slug.go"}`:   "player_report.files_modified",
		`{"files_modified":["../x.go"]}`: "player_report.files_modified[0]",
		`{"tests_written":[{"n":1}]}`:    "player_report.tests_written[0]",
		`null`:                           "player_report",
		`{"implementation_notes":["a"]}`: "player_report.implementation_notes",
	} {
		p := filepath.Join(dir, "report.json")
		os.WriteFile(p, []byte(report), 0o644)
		out, errOut := &syncBuffer{}, &syncBuffer{}
		err := run(context.Background(), []string{"coachd", "review", "--requirements", reqs, "--workspace", ws, "--player-report", p}, env, out, errOut)
		if err == nil || errors.Is(err, errNotApproved) || !strings.Contains(err.Error(), field+":") {
			t.Errorf("%s: err %v, want one naming %s\nstderr %s", report, err, field, errOut)
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Fatalf("the coach ran %d model calls over a report it cannot read", n)
	}
}
