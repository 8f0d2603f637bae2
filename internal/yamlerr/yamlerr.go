// Package yamlerr reads gopkg.in/yaml.v3's errors as file lines, so every
// pack file reports a YAML problem at file:line.
package yamlerr

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Problem is one problem of a YAML error, at a 1-based line.
type Problem struct {
	Line int
	Msg  string
}

var lineRe = regexp.MustCompile(`line (\d+)`)

// parserProblems are the messages of yaml.v3's parser (not its scanner):
// it quotes their line 0-based, and leaves it out on the first line.
var parserProblems = []string{
	"did not find expected node content", "did not find expected key", "did not find expected <stream-start>",
	"did not find expected <document start>", "did not find expected '-' indicator", "did not find expected ',' or '}'",
	"did not find expected ',' or ']'", "found undefined tag handle", "found incompatible YAML document",
	"found duplicate %YAML directive", "found duplicate %TAG directive",
}

// Problems splits err (from yaml.Unmarshal or Node.Decode) into its
// problems, each line made 1-based and moved by off (the line before the
// YAML's first, for front matter); other lines a message names ("already
// defined at line 3") move by off too.
func Problems(err error, off int) []Problem {
	var out []Problem
	for _, m := range strings.Split(err.Error(), "\n") {
		m = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(m), "yaml:"))
		if m == "" || m == "unmarshal errors:" {
			continue
		}
		p := Problem{}
		if sm := lineRe.FindStringSubmatchIndex(m); sm != nil && strings.HasPrefix(m[sm[1]:], ":") {
			p.Line, _ = strconv.Atoi(m[sm[2]:sm[3]])
			m = strings.TrimSpace(m[:sm[0]] + m[sm[1]+1:])
		}
		if isParser(m) {
			p.Line++ // 0-based (absent on the first line)
		}
		p.Line = max(p.Line, 1) + off // no line: the first
		p.Msg = lineRe.ReplaceAllStringFunc(m, func(s string) string {
			n, _ := strconv.Atoi(strings.TrimPrefix(s, "line "))
			return "line " + strconv.Itoa(n+off)
		})
		out = append(out, p)
	}
	return out
}

func isParser(msg string) bool {
	for _, p := range parserProblems {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// Error is err as "file:line: message" lines, one per problem; a type
// error names its field under root (nil: a syntax error, no document).
func Error(file string, root *yaml.Node, err error) error {
	var lines []string
	for _, p := range Problems(err, 0) {
		lines = append(lines, fmt.Sprintf("%s:%d: %s", file, p.Line, Named(root, p.Line, p.Msg)))
	}
	return fmt.Errorf("%s", strings.Join(lines, "\n"))
}
