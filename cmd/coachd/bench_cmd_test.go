package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/loadtest"
)

// coachd bench plays both kinds of turns against a real server on the
// paced fake, beside the floor, and reports every turn finished.
func TestBenchCommand(t *testing.T) {
	fake := anthropictest.New()
	fake.SetScript(loadtest.ScriptAny(loadtest.DefaultPace))
	up := httptest.NewServer(fake.Handler())
	defer up.Close()
	defer fake.Close()
	const admin = "bench-test-admin-key-0123"
	p := MustStart(t, []string{"ANTHROPIC_BASE_URL=" + up.URL, "ANTHROPIC_API_KEY=x"},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--admin-key", admin)
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"coachd", "bench", "--url", p.url, "--admin-key", admin,
		"--floor", up.URL, "--clients", "2", "--duration", "300ms"}, func(string) string { return "" }, &out, &errb)
	if err != nil {
		t.Fatalf("bench: %v\n%s\n%s", err, out.String(), errb.String())
	}
	rows := regexp.MustCompile(`(?m)^(bare SDK \(floor\)|coachd)\s+2\s+(\d+)\s.*\s(\d+)$`).FindAllStringSubmatch(out.String(), -1)
	if len(rows) != 4 {
		t.Fatalf("want 4 result rows (floor and coachd, plain and tool):\n%s", out.String())
	}
	for _, r := range rows {
		if r[2] == "0" || r[3] != "0" {
			t.Errorf("%s: %s turns, %s errors\n%s", r[1], r[2], r[3], out.String())
		}
	}
	if !strings.Contains(out.String(), "vs bare SDK (floor): ") {
		t.Errorf("no ratios to the floor:\n%s", out.String())
	}
	// The tool turns called save_note: the fake saw its result come back.
	sawResult := false
	for _, r := range fake.Requests() {
		sawResult = sawResult || len(r.ToolResults()) > 0
	}
	if !sawResult {
		t.Error("no tool round reached the fake")
	}
}

func TestBenchUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "bench", "-h"}, func(string) string { return "" }, &out, &errb); err != nil || !strings.Contains(out.String(), "--floor") {
		t.Fatalf("-h: %v %q", err, out.String())
	}
	for _, args := range [][]string{{}, {"--url", "http://x"}, {"--url", "http://x", "--key", "k", "--clients", "0"}, {"--url", "http://x", "--key", "k", "--kinds", "fast"}} {
		errb.Reset()
		err := run(context.Background(), append([]string{"coachd", "bench"}, args...), func(string) string { return "" }, &out, &errb)
		if err != errUsage || errb.Len() == 0 {
			t.Errorf("%v: %v, stderr %q", args, err, errb.String())
		}
	}
}
