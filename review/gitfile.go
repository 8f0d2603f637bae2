package review

import (
	"bytes"
	"path/filepath"
)

// gitFileLeaves says whether a .git file's contents ("gitdir: PATH", a
// git worktree's or a submodule's pointer to its repository), found at
// rel in the tree being copied, lead out of that tree. Kept in a copy,
// such a pointer would have every git command run there — the worker's
// tests' too — act on the repository it names: commit to its branches,
// rewrite its index. Contents git would not take as a pointer lead
// nowhere.
func gitFileLeaves(rel string, data []byte) bool {
	to, ok := bytes.CutPrefix(data, []byte("gitdir:"))
	if !ok {
		return false
	}
	to = bytes.TrimSpace(to)
	if i := bytes.IndexByte(to, '\n'); i >= 0 {
		to = bytes.TrimSpace(to[:i])
	}
	p := string(to)
	return filepath.IsAbs(p) || !filepath.IsLocal(filepath.Join(filepath.Dir(rel), p))
}
