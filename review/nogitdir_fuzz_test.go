package review

import (
	"bytes"
	"testing"
)

// FuzzNoGitDir: the diff filter gets its input in whatever pieces the git
// process writes. Written in two pieces cut anywhere, a diff passes on
// the same bytes as written whole, and never more than it was given.
func FuzzNoGitDir(f *testing.F) {
	f.Add([]byte("diff --git a/src/.git/HEAD b/dst/.git/HEAD\n+ref\ndiff --git a/src/x.go b/dst/x.go\n+y\n"), uint(20))
	f.Add([]byte("diff --git \"a/dst/.git/logs/HEAD\" \"b/dst/.git/logs/HEAD\"\n+log"), uint(5))
	f.Add([]byte("+no header\n\n\ndiff --git a/src/f b/dst/f"), uint(0))
	f.Fuzz(func(t *testing.T, diff []byte, cut uint) {
		filter := func(pieces ...[]byte) []byte {
			var out bytes.Buffer
			g := &noGitDir{w: &out, roots: []string{"/src", "/dst"}}
			for _, p := range pieces {
				if n, err := g.Write(p); n != len(p) || err != nil {
					t.Fatalf("Write = %d, %v for %d bytes", n, err, len(p))
				}
			}
			g.flush()
			return out.Bytes()
		}
		at := int(cut % uint(len(diff)+1))
		whole, split := filter(diff), filter(diff[:at], diff[at:])
		if !bytes.Equal(whole, split) {
			t.Fatalf("whole: %q\ncut at %d: %q", whole, at, split)
		}
		if len(whole) > len(diff) {
			t.Fatalf("passed on %d bytes of %d", len(whole), len(diff))
		}
	})
}
