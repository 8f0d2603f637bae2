package yamlerr

import (
	"testing"

	"gopkg.in/yaml.v3"
)

// TestProblems: yaml.v3 quotes a parser error's line 0-based (none on the
// first line) and a scanner error's 1-based; both come out 1-based, moved
// by off, and so do the lines a message names.
func TestProblems(t *testing.T) {
	for _, tc := range []struct {
		src  string
		off  int
		line int
		msg  string
	}{
		{"a: 1\nb: [x\nc: 2\n", 0, 2, "did not find expected ',' or ']'"},
		// Opened on the first line: yaml.v3 names where it gave up.
		{"a: [x\n", 0, 2, "did not find expected ',' or ']'"},
		{"a: 1\n\tb: 2\n", 0, 2, "found a tab character that violates indentation"},
		{"a: 1\nb: [x\nc: 2\n", 1, 3, "did not find expected ',' or ']'"},
	} {
		var n yaml.Node
		err := yaml.Unmarshal([]byte(tc.src), &n)
		got := Problems(err, tc.off)
		if len(got) != 1 || got[0].Line != tc.line || got[0].Msg != tc.msg {
			t.Errorf("%q (off %d): %+v, want line %d %q", tc.src, tc.off, got, tc.line, tc.msg)
		}
	}
	var v struct{ A int }
	err := yaml.Unmarshal([]byte("a: x\n"), &v)
	if got := Problems(err, 3); len(got) != 1 || got[0].Line != 4 || got[0].Msg != "cannot unmarshal !!str `x` into int" {
		t.Errorf("type error: %+v", got)
	}
	var m map[string]int
	err = yaml.Unmarshal([]byte("a: 1\na: 2\n"), &m)
	if got := Problems(err, 1); len(got) != 1 || got[0].Line != 3 || got[0].Msg != `mapping key "a" already defined at line 2` {
		t.Errorf("duplicate key: %+v", got)
	}
}
