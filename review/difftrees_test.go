package review

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffTreesIgnoresPlantedConfig: autobuild's final diff ran git with
// HOME set to the shared temporary directory, so a .gitconfig anyone can
// leave in /tmp chose its external diff program, run as the operator.
func TestDiffTreesIgnoresPlantedConfig(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	marker := filepath.Join(tmp, "ran")
	write(t, filepath.Join(tmp, "planted.sh"), "#!/bin/sh\ntouch "+marker+"\n")
	os.Chmod(filepath.Join(tmp, "planted.sh"), 0o755)
	write(t, filepath.Join(tmp, ".gitconfig"), "[diff]\n\texternal = "+filepath.Join(tmp, "planted.sh")+"\n")
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	write(t, filepath.Join(a, "slug.go"), "package slug\n\nvar x = 1\n")
	write(t, filepath.Join(b, "slug.go"), "package slug\n\nvar x = 2\n")
	got := diffTrees(context.Background(), a, b)
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the diff ran a program named by a .gitconfig in the temporary directory")
	}
	if !strings.Contains(got, "+var x = 2") || !strings.Contains(got, "+++ b/slug.go") {
		t.Fatalf("diff:\n%s", got)
	}
}
