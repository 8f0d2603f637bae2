package agent

import (
	"fmt"
	"path/filepath"
	"strings"
)

// reviewGoTestProblem says why a reviewer's go test command line (go -C
// dir test too) could never show the tests passing, or "": go's own
// -json (its output is events, not the framed lines a review reads its
// counts from), or a flag taking the place of the review's own test
// program, -exec or -memprofile (review.ownTestExec refuses to run them).
func reviewGoTestProblem(argv []string) string {
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" {
		return ""
	}
	at := 1
	switch name, _, eq := strings.Cut(strings.TrimLeft(argv[1], "-"), "="); {
	case name == "C" && eq:
		at = 2
	case name == "C":
		at = 3
	}
	if at >= len(argv) || argv[at] != "test" {
		return ""
	}
	args := false // past -args: the test binary's own flags
	for _, a := range argv[at+1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		switch name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); {
		case !args && name == "args":
			args = true
		case !args && name == "json":
			return "asks go test for -json, whose events a review does not read: no run of it could show the tests passing. " +
				"Drop -json (go test runs framed, as under -json, and its counts are parsed)"
		case !args && (name == "exec" || name == "memprofile"), name == "test.memprofile":
			return fmt.Sprintf("sets -%s, which takes the place of the review's own test program (it decides whether a test binary's run ended): "+
				"run_command refuses to run it. Drop -%s", name, name)
		}
	}
	return ""
}
