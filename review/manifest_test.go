package review

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestTreeManifest: what the player changed is what differs between two
// reads of the copy: a file's content, a file added or removed, a file
// turned into a link; the repository's own files are not the change, and
// a named pipe is recorded, not opened (that would wait for a writer).
func TestTreeManifest(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.go"), "package a\n")
	write(t, filepath.Join(dir, "b", "conftest.py"), "")
	write(t, filepath.Join(dir, "gone.txt"), "x")
	write(t, filepath.Join(dir, "same.txt"), "same")
	write(t, filepath.Join(dir, "link"), "a file first")
	start, err := treeManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "a.go"), "package a // changed\n")
	write(t, filepath.Join(dir, "new.txt"), "")
	write(t, filepath.Join(dir, ".git", "objects", "info", "alternates"), "/elsewhere\n")
	os.Remove(filepath.Join(dir, "gone.txt"))
	os.Remove(filepath.Join(dir, "link"))
	if err := os.Symlink("same.txt", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "b", "pipe.py"), 0o644); err != nil {
		t.Fatal(err)
	}
	now, err := treeManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, want := now.changedSince(start), []string{"a.go", "b/pipe.py", "gone.txt", "link", "new.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("changed: got %q, want %q", got, want)
	}
}
