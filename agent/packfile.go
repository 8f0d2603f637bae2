package agent

import (
	"bytes"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/filecap"
	"gopkg.in/yaml.v3"
)

// MaxPackFile bounds a pack file (agents, skills, tools): far above any
// real one, and what a mistaken path (a log, a binary) is refused at.
const MaxPackFile = 1 << 20

// readPackFile reads a pack file, refusing one over MaxPackFile without
// reading it all.
func readPackFile(path string) ([]byte, error) { return filecap.ReadFile(path, MaxPackFile) }

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
