package review

import (
	"bytes"
	"testing"
)

// TestNoGitDir: the .git sections of a tree diff are left out however
// the diff is written, a byte at a time or whole.
func TestNoGitDir(t *testing.T) {
	diff := "diff --git a/src/.git/objects/ab/cd b/dst/.git/objects/ab/cd\nnew file mode 100644\n+x\x01\x02 diff --git a/src/f b/dst/f\n" +
		"diff --git \"a/dst/.git/logs/HEAD\" \"b/dst/.git/logs/HEAD\"\n+log\n" +
		"diff --git a/src/slug.go b/dst/slug.go\n-old\n+new\n" +
		"diff --git a/src/.gitignore b/dst/.gitignore\n+bin/"
	want := "diff --git a/src/slug.go b/dst/slug.go\n-old\n+new\ndiff --git a/src/.gitignore b/dst/.gitignore\n+bin/"
	for _, size := range []int{1, 7, len(diff)} {
		var got bytes.Buffer
		f := &noGitDir{w: &got, roots: []string{"/src", "/dst"}}
		for p := []byte(diff); len(p) > 0; p = p[min(size, len(p)):] {
			f.Write(p[:min(size, len(p))])
		}
		f.flush() // the last line, unended
		if got.String() != want {
			t.Errorf("written %d bytes at a time:\n%q\nwant\n%q", size, got.String(), want)
		}
	}
}
