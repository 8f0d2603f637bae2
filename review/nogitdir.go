package review

import (
	"bytes"
	"io"
)

// noGitDir passes on a `git diff --no-index` of the trees roots but the
// sections of a repository's own files (.git/…, or a .git file, by their
// a/ path): the build writes its snapshot commit's objects there, and
// what the player did is the rest. A section is told by its "diff --git"
// line's start.
type noGitDir struct {
	w     io.Writer
	roots []string
	start []byte // the current line's start, while it is not told
	mid   bool   // in a line already told
	skip  bool   // in a section left out
}

// flush passes on a last line that has no newline, if it is not left out.
func (f *noGitDir) flush() {
	if len(f.start) > 0 && !bytes.HasPrefix(f.start, []byte("diff --git ")) && !f.skip {
		f.w.Write(f.start)
	}
	f.start = f.start[:0]
}

func (f *noGitDir) Write(p []byte) (int, error) {
	n := len(p)
	longest := 0
	for _, r := range f.roots {
		longest = max(longest, len(r))
	}
	limit := len(`diff --git "a`) + longest + len("/.git/")
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if f.mid {
			chunk := p
			if i >= 0 {
				chunk, f.mid = p[:i+1], false
			}
			if !f.skip {
				if _, err := f.w.Write(chunk); err != nil {
					return n, err
				}
			}
			p = p[len(chunk):]
			continue
		}
		take := len(p)
		if i >= 0 {
			take = i + 1
		}
		take = min(take, limit-len(f.start))
		f.start, p = append(f.start, p[:take]...), p[take:]
		if len(f.start) < limit && f.start[len(f.start)-1] != '\n' {
			continue // more of the line's start to come
		}
		if rest, ok := bytes.CutPrefix(f.start, []byte("diff --git ")); ok {
			rest = bytes.TrimPrefix(rest, []byte(`"`))
			f.skip = false
			for _, r := range f.roots {
				// .git/… or a .git file (a worktree's pointer, left out
				// of a build's copy): the next byte is /, a space or the
				// quote that ends the path.
				after, ok := bytes.CutPrefix(rest, []byte("a"+r+"/.git"))
				f.skip = f.skip || ok && len(after) > 0 && bytes.IndexByte([]byte(`/ "`), after[0]) >= 0
			}
		}
		if !f.skip {
			if _, err := f.w.Write(f.start); err != nil {
				return n, err
			}
		}
		f.mid = f.start[len(f.start)-1] != '\n'
		f.start = f.start[:0]
	}
	return n, nil
}
