package agent

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/coachd/coachd/internal/yamlerr"
	"gopkg.in/yaml.v3"
)

// Problem is one thing wrong in a coach pack, at file:line.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message)
	}
	return p.File + ": " + p.Message
}

// PackError lists every problem found in a pack.
type PackError struct{ Problems []Problem }

func (e *PackError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return "coach pack: " + strconv.Itoa(len(lines)) + " problem(s):\n" + strings.Join(lines, "\n")
}

var nameRe = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,63}$`)

// frontMatter is a markdown file split into its YAML front matter and
// body, with the line offsets needed to report file:line.
type frontMatter struct {
	file     string
	root     *yaml.Node // the front matter mapping
	off      int        // add to a YAML line to get the file line
	body     string
	bodyLine int
	probs    *[]Problem
	// typed are the lines of values of the wrong type: their field
	// was left zero, which is no further problem to report there.
	typed map[int]bool
}

// splitFrontMatter reads "---\nyaml\n---\nbody". It reports a problem and
// returns nil when the file has no front matter.
func splitFrontMatter(file, text string, probs *[]Problem) *frontMatter {
	// A byte order mark (Windows editors write one) is no part of the file.
	text = strings.ReplaceAll(strings.TrimPrefix(text, "\ufeff"), "\r\n", "\n")
	fm := &frontMatter{file: file, off: 1, probs: probs}
	if !strings.HasPrefix(text, "---\n") {
		fm.bad(1, "must start with YAML front matter between --- lines")
		return nil
	}
	rest := text[4:]
	if rest == "---" || strings.HasPrefix(rest, "---\n") {
		fm.bad(2, "front matter must be a YAML mapping") // closed, but empty
		return nil
	}
	end := strings.Index(rest, "\n---\n")
	if end < 0 {
		if strings.HasSuffix(rest, "\n---") {
			end = len(rest) - 4
		} else {
			fm.bad(1, "front matter is not closed by a --- line")
			return nil
		}
	}
	yml := rest[:end+1]
	if end+5 <= len(rest) {
		fm.body = rest[end+5:]
	}
	fm.bodyLine = strings.Count(yml, "\n") + 3
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(yml), &doc); err != nil {
		fm.yamlErr(err)
		return nil
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		fm.bad(2, "front matter must be a YAML mapping")
		return nil
	}
	fm.root = doc.Content[0]
	return fm
}

func (fm *frontMatter) bad(line int, msg string) {
	if fm.typed[line] {
		return
	}
	*fm.probs = append(*fm.probs, Problem{File: fm.file, Line: line, Message: msg})
}

// yamlErr reports a YAML error with its line numbers made file lines.
func (fm *frontMatter) yamlErr(err error) {
	for _, p := range yamlerr.Problems(err, fm.off) {
		msg := yamlerr.Named(fm.root, p.Line-fm.off, p.Msg)
		fm.bad(p.Line, msg)
		if msg != p.Msg {
			if fm.typed == nil {
				fm.typed = map[int]bool{}
			}
			fm.typed[p.Line] = true
		}
	}
}

// decode decodes the front matter into v, reporting unknown keys and
// type errors. It returns false when v could not be filled; a value of
// the wrong type leaves its field zero and the rest filled, so the file's
// other problems are reported with it.
func (fm *frontMatter) decode(v any, keys []string) bool {
	fm.checkKeys(fm.root, keys)
	if err := fm.root.Decode(v); err != nil {
		fm.yamlErr(err)
		// Only values of the wrong type: a duplicate key leaves the
		// mapping undecoded.
		var te *yaml.TypeError
		return errors.As(err, &te) && !slices.ContainsFunc(te.Errors, func(e string) bool { return !strings.Contains(e, "cannot unmarshal") })
	}
	return true
}

// yamlKeys lists the yaml keys of struct v's fields in field order: the
// keys checkKeys accepts for the mapping v is decoded from.
func yamlKeys(v any) []string {
	t := reflect.TypeOf(v)
	var keys []string
	for i := range t.NumField() {
		if key, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); key != "" && key != "-" {
			keys = append(keys, key)
		}
	}
	return keys
}

// checkKeys reports keys of mapping m that are not in keys.
func (fm *frontMatter) checkKeys(m *yaml.Node, keys []string) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; !slices.Contains(keys, k.Value) {
			fm.bad(k.Line+fm.off, fmt.Sprintf("unknown key %q (known: %s)", k.Value, strings.Join(keys, ", ")))
		}
	}
}

// checkName reports a name that is not a lowercase name or not the file's
// base name (agents/<name>.md, skills/<name>.md).
func (fm *frontMatter) checkName(name, base string) {
	if !nameRe.MatchString(name) {
		fm.bad(fm.line("name"), "name must be lowercase letters, digits, - and _, starting with a letter")
	} else if name != base {
		fm.bad(fm.line("name"), fmt.Sprintf("name %q must match the file name %q", name, base))
	}
}

// node returns the value node at a key path, or nil.
func (fm *frontMatter) node(path ...string) *yaml.Node {
	n := fm.root
	for _, key := range path {
		var next *yaml.Node
		if n != nil && n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					next = n.Content[i+1]
				}
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// line is the file line of the value at a key path (of the front matter's
// first line when absent).
func (fm *frontMatter) line(path ...string) int {
	if n := fm.node(path...); n != nil {
		return n.Line + fm.off
	}
	return 2
}

// itemLine is the file line of the i-th item of the sequence at path.
func (fm *frontMatter) itemLine(i int, path ...string) int {
	if n := fm.node(path...); n != nil && n.Kind == yaml.SequenceNode && i < len(n.Content) {
		return n.Content[i].Line + fm.off
	}
	return fm.line(path...)
}
