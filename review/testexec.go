package review

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// testExecScript is the go test -exec program of a run: it runs a test
// binary with -test.memprofile naming a file in the run's own directory,
// which the testing package writes only once its run has ended (M.after).
// A binary that exits 0 without it ended early, whatever it printed (a
// test that prints the testing package's framed "--- PASS" and "PASS"
// lines, then syscall.Exit(0), forges its whole output): it counts as
// failed, exit 1, and go test reports its package FAIL. The verdict does
// not come from anything the test binary prints.
const testExecScript = `#!/bin/sh
p=%s/$$.prof
b=$1
shift
for a in "$@"; do
	case "$a" in -test.list|-test.list=*) exec "$b" "$@" ;; esac # a listing runs no test
done
"$b" -test.memprofile="$p" "$@"
c=$?
if [ "$c" -eq 0 ] && [ ! -s "$p" ]; then
	echo "coachd: the test binary exited 0 before the testing package ended its run: counted as failed"
	exit 1
fi
exit "$c"
`

// testExec writes a run's go test -exec program into home (the run's
// own directory, removed after it) and returns its path.
func testExec(home string) (string, error) {
	if home == "" || strings.ContainsAny(home, "'\n") {
		return "", fmt.Errorf("no directory for the run's test program")
	}
	ends := filepath.Join(home, "ends")
	if err := os.Mkdir(ends, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(home, "coachd-test-exec")
	if err := os.WriteFile(path, fmt.Appendf(nil, testExecScript, "'"+ends+"'"), 0o700); err != nil {
		return "", err
	}
	return path, nil
}

// ownTestExec names the flag of a go test command line that would take
// the place of the run's test program ("" when none): its own -exec
// (go test keeps the last one, so the run's would not run) or its own
// -memprofile (the file that proves the binary's run ended is the run's).
func ownTestExec(argv []string) string {
	at := goTestAt(argv)
	if at < 0 {
		return ""
	}
	args := false // past -args: the test binary's own flags
	for _, a := range argv[at+1:] {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		switch {
		case !args && (name == "args"):
			args = true
		case !args && (name == "exec" || name == "memprofile"), name == "test.memprofile":
			return "-" + name
		}
	}
	return ""
}
