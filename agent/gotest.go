package agent

import (
	"path/filepath"
	"strings"
)

// goTestJSON reports whether argv is go test (go -C dir test too) with
// go's own -json flag, before any -args (after it, the flags are the
// test binary's).
func goTestJSON(argv []string) bool {
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" {
		return false
	}
	at := 1
	switch name, _, eq := strings.Cut(strings.TrimLeft(argv[1], "-"), "="); {
	case name == "C" && eq:
		at = 2
	case name == "C":
		at = 3
	}
	if at >= len(argv) || argv[at] != "test" {
		return false
	}
	for _, a := range argv[at+1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name {
		case "args":
			return false
		case "json":
			return true
		}
	}
	return false
}
