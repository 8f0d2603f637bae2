package review

import (
	"os"
	"path/filepath"
	"testing"
)

func TestParseTestCounts(t *testing.T) {
	for file, want := range map[string]*TestCounts{
		"go-plain.txt":        {Framework: "go", PackagesOK: 2},
		"go-fail.txt":         {Framework: "go", Failed: 1, PackagesOK: 1, PackagesFailed: 1},
		"go-verbose.txt":      {Framework: "go", Passed: 4, Failed: 1, Skipped: 1, PackagesFailed: 1},
		"go-build-failed.txt": {Framework: "go", Failed: 1, PackagesFailed: 1},
		"pytest.txt":          {Framework: "pytest", Passed: 3, Failed: 1},
		"pytest-q.txt":        {Framework: "pytest", Passed: 5, Skipped: 1},
		"jest.txt":            {Framework: "jest", Passed: 3, Failed: 1, Skipped: 1},
		"go-skipped.txt":      {Framework: "go", Skipped: 1, PackagesOK: 1},
		"go-notests.txt":      nil, // no package ran a test
		"none.txt":            nil,
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "output", file))
		if err != nil {
			t.Fatal(err)
		}
		got := ParseTestCounts(string(data))
		switch {
		case want == nil && got != nil:
			t.Errorf("%s: %+v, want nil", file, *got)
		case want != nil && (got == nil || *got != *want):
			t.Errorf("%s: %+v, want %+v", file, got, *want)
		}
	}
}

// TestPassed: a run approves only when it exited 0, nothing failed and a
// test is seen to pass. Tests all skipped (the worker writes the tests, and
// t.Skip is one line) and packages with no test prove nothing; a review
// found a run of skipped tests accepted as a pass.
func TestPassed(t *testing.T) {
	for file, want := range map[string]bool{
		"go-plain.txt":   false, // "ok" lines, no test seen: run_command's go test is verbose, so none ran
		"go-verbose.txt": false, // a failure
		"go-fail.txt":    false,
		"go-skipped.txt": false,
		"go-notests.txt": false,
		"pytest-q.txt":   true,
		"jest.txt":       false,
	} {
		data, err := os.ReadFile(filepath.Join("testdata", "output", file))
		if err != nil {
			t.Fatal(err)
		}
		run := &CommandRun{Tests: ParseTestCounts(string(data))}
		if got := run.Passed(); got != want {
			t.Errorf("%s: Passed() = %v, want %v (%+v)", file, got, want, run.Tests)
		}
	}
	skipped := &CommandRun{Tests: &TestCounts{Framework: "pytest", Skipped: 3}}
	if skipped.Passed() {
		t.Error("a pytest run of three skipped tests passed")
	}
}

// FuzzParseTestCounts: any output parses without panicking and counts are
// never negative. (Time is linear by construction: RE2 regexps only.)
func FuzzParseTestCounts(f *testing.F) {
	for _, s := range []string{"ok  \tx\t0.1s\n", "--- FAIL: T (0.00s)\nFAIL\tx\t0.1s\n", "3 passed, 1 failed in 0.12s", "Tests: 1 failed, 2 passed, 3 total"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseTestCounts(s)
		if c != nil && (c.Passed < 0 || c.Failed < 0 || c.Skipped < 0) {
			t.Fatalf("negative counts %+v", c)
		}
	})
}
