package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAutobuildInterrupted: a build stopped (Ctrl-C) once the player has
// written its fix ended with "context canceled" and nothing else: the
// player's work was in a scratch copy that neither stdout nor stderr
// named. The copy is now named as soon as it is made.
func TestAutobuildInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an autobuild")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fake := anthropictest.NewServer()
	defer fake.Close()
	fixed, _ := os.ReadFile(filepath.Join("..", "..", "review", "testdata", "slug_fixed.go.txt"))
	fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if sys, _ := json.Marshal(req.Body["system"]); !strings.Contains(string(sys), "PLAYER") {
			return coachScript(req)
		}
		if len(req.ToolResults()) > 0 {
			cancel() // the user's Ctrl-C, once the fix is written
			return anthropictest.Text(`{"files_modified":["slug.go"],"tests_written":[]}`, 20)
		}
		in, _ := json.Marshal(map[string]string{"path": "slug.go", "content": string(fixed)})
		return anthropictest.Blocks(anthropictest.ToolUse("toolu_w", "write_file", string(in)))
	})
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
	env := getenvFrom(map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(),
		"COACHD_DB": filepath.Join(t.TempDir(), "coachd.db"), "COACHD_SCRATCH": scratch})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	err = run(ctx, []string{"coachd", "autobuild", "--pack", autobuildDir, "--task-id", "TASK-x",
		"--requirements", filepath.Join(autobuildDir, "sample", "REQUIREMENTS.md"), "--workspace", filepath.Join(autobuildDir, "sample")}, env, out, errOut)
	if err == nil {
		t.Fatalf("interrupted build succeeded\nstdout %s\nstderr %s", out, errOut)
	}
	copies, _ := filepath.Glob(filepath.Join(scratch, "coachd-autobuild-*"))
	if len(copies) != 1 {
		t.Fatalf("scratch copies %v", copies)
	}
	if got, _ := os.ReadFile(filepath.Join(copies[0], "slug.go")); !bytes.Equal(got, fixed) {
		t.Fatalf("the player's slug.go is not in the copy %s", copies[0])
	}
	if !strings.Contains(out.String()+errOut.String(), copies[0]) {
		t.Errorf("the interrupted build (%v) does not say where the player's work is (%s)\nstdout %s\nstderr %s", err, copies[0], out, errOut)
	}
}
