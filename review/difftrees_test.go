package review

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
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

// TestDiffTreesBounded: autobuild's final diff was read whole into memory
// and printed whatever its size; a player that wrote a few hundred MiB
// made it as large. It keeps its first MaxDiffBytes and says how much was
// cut.
func TestDiffTreesBounded(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	write(t, filepath.Join(a, "slug.go"), "package slug\n")
	write(t, filepath.Join(b, "slug.go"), "package slug\n")
	write(t, filepath.Join(b, "big.txt"), strings.Repeat("a generated line of the player's output\n", 80_000)) // 3.1 MiB
	got := diffTrees(context.Background(), a, b)
	if len(got) > 1<<20+200 {
		t.Fatalf("the diff is %d bytes", len(got))
	}
	if !strings.HasPrefix(got, "diff --git ") || !strings.Contains(got[:300], "+++ b/big.txt\n") {
		t.Fatalf("the diff's head is not kept:\n%.300s", got)
	}
	var cut int
	i := strings.LastIndex(got, "\n[… ")
	if i < 0 {
		t.Fatalf("the diff does not say it was cut: …%s", got[max(0, len(got)-300):])
	}
	if _, err := fmt.Sscanf(got[i:], "\n[… %d more bytes of the diff cut …]", &cut); err != nil || cut < 2<<20 || cut > 4<<20 {
		t.Fatalf("cut note %q: %d, %v", got[i:], cut, err)
	}
	if !utf8.ValidString(got) {
		t.Fatal("the cut diff is not valid UTF-8")
	}
}

// TestDiffTreesNamesRelative: a file the player added (or removed) was
// named in its "diff --git" line by its absolute path on the server
// (a/<scratch dir>/new.go), as only paths under each side's own root were
// made relative.
func TestDiffTreesNamesRelative(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	write(t, filepath.Join(a, "old.go"), "package old\n")
	write(t, filepath.Join(b, "new.go"), "package new\n")
	moved := strings.Repeat("// the same in both\n", 20)
	write(t, filepath.Join(a, "before.go"), moved)
	write(t, filepath.Join(b, "after.go"), moved)
	got := diffTrees(context.Background(), a, b)
	for _, want := range []string{"diff --git a/new.go b/new.go\n", "diff --git a/old.go b/old.go\n", "+++ b/new.go\n", "--- a/old.go\n",
		"diff --git a/before.go b/after.go\n", "rename from before.go\n", "rename to after.go\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the diff lacks %q", want)
		}
	}
	if strings.Contains(got, a) || strings.Contains(got, b) {
		t.Errorf("the diff names a server path:\n%s", got)
	}
}
