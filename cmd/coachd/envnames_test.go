package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestKnownEnv: knownEnv is every COACHD_* name the source reads, no more
// and no fewer, so that a setting added later is never warned about as a
// typo, and a removed one is.
func TestKnownEnv(t *testing.T) {
	name := regexp.MustCompile(`"COACHD_[A-Z0-9_]+`)
	var used []string
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != filepath.Join("..", "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllString(string(src), -1) {
			if n := m[1:]; !slices.Contains(used, n) {
				used = append(used, n)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(used)
	known := slices.Sorted(slices.Values(knownEnv))
	if !slices.Equal(used, known) {
		t.Errorf("the source reads\n%v\nknownEnv lists\n%v", used, known)
	}
	if got := unknownEnv([]string{"COACHD_DB=x", "COACHD_DATABSE=/secret", "PATH=/bin", "COACHD_DATABSE=y", "COACHD_X"}); !slices.Equal(got, []string{"COACHD_DATABSE", "COACHD_X"}) {
		t.Errorf("unknownEnv: %v", got)
	}
}

// TestUnknownEnvWarned: a COACHD_* variable no setting reads (a typo of
// COACHD_DB, which left the database at its default silently) is named in
// a warning at start; its value, which may be a secret, is not logged.
func TestUnknownEnvWarned(t *testing.T) {
	p := MustStart(t, []string{"COACHD_DATABSE=postgres://u:hunter2@db/coachd", "COACHD_LOG_FORMAT=json"},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	line := p.stderr.waitFor(t, regexp.MustCompile(`[^\n]*unknown environment variable[^\n]*`))[0]
	if !strings.Contains(line, `"name":"COACHD_DATABSE"`) || !strings.Contains(line, `"level":"WARN"`) {
		t.Errorf("the warning: %s", line)
	}
	if log := p.stderr.String(); strings.Contains(log, "hunter2") || strings.Contains(log, "COACHD_LOG_FORMAT") {
		t.Errorf("the log has the value, or warns of a known name:\n%s", log)
	}
}
