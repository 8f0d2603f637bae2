package agent

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/filecap"
	"gopkg.in/yaml.v3"
)

// MaxPackFile bounds a pack file (agents, skills, tools): far above any
// real one, and what a mistaken path (a log, a binary) is refused at.
const MaxPackFile = 1 << 20

// packRoot reads a pack's files inside its directory (os.Root): links
// are followed while they stay in it (a Kubernetes ConfigMap's ..data),
// and a file or folder linked from elsewhere (skills/x.md to /etc/passwd)
// is refused, never read. Paths are dir-joined, as glob lists them.
type packRoot struct {
	root *os.Root
	dir  string
}

// name is path relative to the pack directory, as the root reads it.
func (r packRoot) name(path string) string {
	if rel, err := filepath.Rel(r.dir, path); err == nil {
		return rel
	}
	return path
}

// readFile reads a pack file, refusing one over MaxPackFile without
// reading it all.
func (r packRoot) readFile(path string) ([]byte, error) {
	return filecap.ReadIn(r.root, r.name(path), MaxPackFile)
}

// exists tells whether path is there (a link leading out is: reading it
// is the problem to report).
func (r packRoot) exists(path string) bool {
	_, err := r.root.Lstat(r.name(path))
	return err == nil || !errors.Is(err, fs.ErrNotExist)
}

// glob lists the files of dir/sub whose names match one of patterns. The
// names are matched, not the path: a pack's path may hold [ or *. A sub
// that cannot be listed (a link out) is a problem; an absent one is none.
func (r packRoot) glob(sub string, problem func(file string, line int, msg string), patterns ...string) []string {
	d, err := filecap.OpenIn(r.root, sub)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var entries []fs.DirEntry
	if err == nil {
		entries, err = d.ReadDir(-1)
		d.Close()
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		problem(sub, 0, unwrapPathErr(filecap.InRoot(err)).Error())
		return nil
	}
	var out []string
	for _, e := range entries {
		if slices.ContainsFunc(patterns, func(pat string) bool { ok, _ := filepath.Match(pat, e.Name()); return ok }) {
			out = append(out, filepath.Join(r.dir, sub, e.Name()))
		}
	}
	sort.Strings(out)
	return out
}

// unwrapPathErr is the OS's reason without the path (the problem names
// the file).
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// badText names what makes data unfit for a text file (a prompt the model
// reads, YAML an operator wrote), with its line: invalid UTF-8 or a NUL
// byte. "" when it is fine.
func badText(data []byte) (int, string) {
	if i := bytes.IndexByte(data, 0); i >= 0 {
		return 1 + bytes.Count(data[:i], []byte("\n")), "contains a NUL byte"
	}
	if !utf8.Valid(data) {
		for i := 0; i < len(data); {
			r, n := utf8.DecodeRune(data[i:])
			if r == utf8.RuneError && n == 1 {
				return 1 + bytes.Count(data[:i], []byte("\n")), "is not valid UTF-8"
			}
			i += n
		}
	}
	return 0, ""
}

// noteVocabularyFile is notes.yaml.
type noteVocabularyFile struct {
	Types      []string `yaml:"types"`
	Categories []string `yaml:"categories"`
}

// parseNoteVocabulary reads notes.yaml: {types: [...], categories: [...]},
// lowercase names; a missing list keeps the default one. Problems are
// reported at their lines, as the agent files' are.
func parseNoteVocabulary(data []byte, problem func(file string, line int, msg string)) coachd.NoteVocabulary {
	v := coachd.DefaultNoteVocabulary
	var probs []Problem
	defer func() {
		for _, p := range probs {
			problem(p.File, p.Line, p.Message)
		}
	}()
	fm := &frontMatter{file: "notes.yaml", probs: &probs}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		fm.yamlErr(err)
		return v
	}
	if len(doc.Content) == 0 {
		return v // empty: the defaults
	}
	if fm.root = doc.Content[0]; fm.root.Kind != yaml.MappingNode {
		fm.bad(fm.root.Line, "must be a mapping: {types: [...], categories: [...]}")
		return v
	}
	var f noteVocabularyFile
	if !fm.decode(&f, yamlKeys(f)) {
		return v
	}
	check := func(key string, names []string) []string {
		if len(names) > 50 {
			fm.bad(fm.line(key), key+": at most 50 names")
		}
		for i, n := range names {
			switch {
			case !nameRe.MatchString(n):
				fm.bad(fm.itemLine(i, key), fmt.Sprintf("%s: %q must be a lowercase name (letters, digits, - and _)", key, n))
			case slices.Index(names, n) != i:
				fm.bad(fm.itemLine(i, key), fmt.Sprintf("%s: %q is listed twice", key, n))
			}
		}
		return names
	}
	if len(f.Types) > 0 {
		v.Types = check("types", f.Types)
	}
	if len(f.Categories) > 0 {
		v.Categories = check("categories", f.Categories)
	}
	return v
}
