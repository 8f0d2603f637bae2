package yamlerr

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var typeRe = regexp.MustCompile("^cannot unmarshal !!(\\w+) (?:`(.*)` )?into (\\S+)$")

// Named rewrites yaml.v3's type error msg, found at line (of the YAML
// root is the top node of), as the field at fault and what it takes:
// `limits.max_rounds: "lots" is not an integer` for "cannot unmarshal
// !!str `lots` into int64". Any other msg is returned as it is.
func Named(root *yaml.Node, line int, msg string) string {
	m := typeRe.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	what := map[string]string{"map": "a mapping", "seq": "a list"}[m[1]]
	if m[2] != "" || what == "" {
		what = strconv.Quote(m[2])
	}
	out := what + " is not " + typeWord(m[3])
	if path := fieldAt(root, line, m[2], ""); path != "" {
		out = path + ": " + out
	}
	return out
}

// fieldAt is the dotted key path of the value at line under n: the
// scalar v, or a mapping or list when v is "". "" when there is none.
func fieldAt(n *yaml.Node, line int, v, path string) string {
	if n == nil {
		return ""
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			if path != "" {
				key = path + "." + key
			}
			if at(val, line, v) {
				return key
			}
			if p := fieldAt(val, line, v, key); p != "" {
				return p
			}
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if at(item, line, v) {
				return path
			}
			if p := fieldAt(item, line, v, path); p != "" {
				return p
			}
		}
	}
	return ""
}

func at(n *yaml.Node, line int, v string) bool {
	if n.Line != line {
		return false
	}
	if n.Kind == yaml.ScalarNode {
		return n.Value == v
	}
	return v == ""
}

// typeWord names what a Go type takes, for a pack author.
func typeWord(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a mapping"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "time."):
		return "a duration"
	}
	return "a mapping" // a struct
}
