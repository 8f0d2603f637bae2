package review

import (
	"bytes"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// TestCounts are the test results parsed from a command's output.
type TestCounts struct {
	Framework string `json:"framework"` // go, pytest or jest
	Passed    int    `json:"passed"`
	Failed    int    `json:"failed"`
	Skipped   int    `json:"skipped"`
	// PackagesOK and PackagesFailed count go test's package lines (without
	// -v, passing tests print nothing of their own).
	PackagesOK     int `json:"packages_ok,omitempty"`
	PackagesFailed int `json:"packages_failed,omitempty"`
}

// maxPackages bounds CommandRun.Packages.
const maxPackages = 1000

var (
	goTestLine   = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL|SKIP|BENCH): `)
	goTestRun    = regexp.MustCompile(`^\s*=== RUN `)
	goPkgOK      = regexp.MustCompile(`(?m)^ok  \t?\s*\S+.*$`)
	goPkgNone    = regexp.MustCompile(`^\?\s+(\S+)\s+\[no test files\]`)
	goPkgFail    = regexp.MustCompile(`(?m)^(FAIL\t\S+|FAIL\s+\S+\s+[\d.]+s|FAIL\s+\S+ \[build failed\]|FAIL\s+\S+ \[setup failed\])`)
	pytestResult = regexp.MustCompile(`(?m)^(?:=+ )?((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)(?:, )?)+) in [\d.]+s`)
	pytestCount  = regexp.MustCompile(`(\d+) (passed|failed|skipped|errors?)`)
	jestTests    = regexp.MustCompile(`(?m)^Tests:\s+(.*\d+ total)`)
	jestCount    = regexp.MustCompile(`(\d+) (passed|failed|skipped|todo)`)
)

// ParseTestCounts reads go test, pytest or jest output; nil when none of
// them is recognised. It runs in time linear in the output (RE2).
func ParseTestCounts(out string) *TestCounts {
	c := testCounter{kind: anyFramework}
	c.Write([]byte(out))
	return c.counts()
}

// maxCountLine is how much of a line testCounter reads: every line it
// recognises is told by its start.
const maxCountLine = 512

// testCounter reads a command's output line by line as it is written and
// keeps what the counts need, so that they cover all of it however much
// of the output itself is cut (the worker's tests can print enough to
// push a failure out of the head and tail kept).
type testCounter struct {
	line                         []byte // the current line's start
	pass, fail, skip, ok, pkgBad int
	panicked, seenLine           bool
	jest, pytest                 string // the last summary line of each
	// framed is set for go test run with -test.v=test2json (frameGoTest):
	// then only the testing package's own lines, which start with its
	// framing mark, report a test's result; a test printing "--- PASS"
	// is output. open counts the tests started and not yet reported: one
	// still open at the end never finished (the binary exited in it).
	framed bool
	open   int
	pkgs   []string // CommandRun.Packages
	// kind is the framework whose counts are read (testFramework of the
	// command line; "" reads none, anyFramework all): a command's
	// output says how its own tests went, and nothing else does. cat of
	// a file, or a package script in a Go module, that prints go test's
	// lines ran no go test.
	kind string
}

// anyFramework has testCounter read the output of any of them
// (ParseTestCounts).
const anyFramework = "any"

// reads reports whether the counter reads framework f's lines.
func (c *testCounter) reads(f string) bool { return c.kind == f || c.kind == anyFramework }

// covered notes the package of a go test package line.
func (c *testCounter) covered(line string) {
	if f := strings.Fields(line); len(f) > 1 && len(c.pkgs) < maxPackages {
		c.pkgs = append(c.pkgs, f[1])
	}
}

// framingMark starts the testing package's own lines under
// -test.v=test2json (what go test -json uses to tell them from output).
const framingMark = "\x16"

// frameGoTest has a go test command line run its test binaries with
// -test.v=test2json, so that their result lines are told from what the
// tests print; other command lines are returned unchanged. A command
// that already asks for -json is left alone (its output is JSON).
func frameGoTest(argv []string) ([]string, bool) {
	at := goTestAt(argv)
	if at < 0 {
		return argv, false
	}
	for _, a := range argv[at+1:] {
		if a == "-args" || a == "--args" {
			return append(slices.Clone(argv), "-test.v=test2json"), true
		}
		if a == "-json" || a == "--json" || strings.HasPrefix(a, "-json=") || strings.HasPrefix(a, "--json=") {
			return argv, false
		}
	}
	return append(slices.Clone(argv), "-args", "-test.v=test2json"), true
}

// goTestAt is the index of a go test command line's "test" (after go's
// own -C flag, if any), or -1 when argv is not go test.
func goTestAt(argv []string) int {
	if len(argv) < 2 || filepath.Base(argv[0]) != "go" {
		return -1
	}
	at := 1
	switch a := argv[1]; {
	case a == "-C" || a == "--C":
		at = 3
	case strings.HasPrefix(a, "-C=") || strings.HasPrefix(a, "--C="):
		at = 2
	}
	if at >= len(argv) || argv[at] != "test" {
		return -1
	}
	return at
}

func (c *testCounter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i, skip := bytes.IndexByte(p, '\n'), 1
		if c.framed {
			// A framing mark within a line starts a line of its own: the
			// output of a test that ended without a newline comes
			// before it (as test2json reads it).
			from := 0
			if len(c.line) == 0 {
				from = 1 // a mark that starts a line is that line's
			}
			if j := bytes.IndexByte(p[min(from, len(p)):], framingMark[0]); j >= 0 && (i < 0 || from+j < i) {
				i, skip = from+j, 0
			}
		}
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxCountLine - len(c.line); room > 0 {
			c.line = append(c.line, chunk[:min(room, len(chunk))]...)
		}
		if i < 0 {
			break
		}
		c.endLine()
		p = p[i+skip:]
	}
	return n, nil
}

// endLine counts the line read so far.
func (c *testCounter) endLine() {
	line := string(c.line)
	c.line = c.line[:0]
	marked := false
	if c.framed {
		line, marked = strings.CutPrefix(line, framingMark)
	}
	first := !c.seenLine
	c.seenLine = true
	switch {
	case !c.reads("go") && !c.reads("jest") && !c.reads("pytest"):
		// Not a test run: its lines count for nothing.
	case !c.framed && c.reads("jest") && jestTests.MatchString(line): // go test's output is go's
		c.jest = line
	case !c.framed && c.reads("pytest") && pytestResult.MatchString(line):
		c.pytest = line
	case !c.reads("go"):
		// Only a go test command line's output has go test's lines.
	case goPkgFail.MatchString(line):
		c.pkgBad++
	case goPkgOK.MatchString(line):
		if !strings.Contains(line, "[no tests to run]") { // a package that ran no test proves nothing
			c.ok++
			c.covered(line)
		}
	case goPkgNone.MatchString(line):
		c.covered(line)
	case strings.HasPrefix(line, "panic: ") && !first:
		c.panicked = true
	case c.framed && !marked:
		// The tests' own output: nothing in it reports a result.
	case c.framed && goTestRun.MatchString(line):
		// A benchmark reports no "--- " line of its own.
		if !strings.HasPrefix(strings.TrimSpace(strings.TrimSpace(line)[len("=== RUN"):]), "Benchmark") {
			c.open++
		}
	default:
		if m := goTestLine.FindStringSubmatch(line); m != nil {
			if c.framed && c.open > 0 && m[1] != "BENCH" {
				c.open--
			}
			switch m[1] {
			case "PASS":
				c.pass++
			case "FAIL":
				c.fail++
			case "SKIP":
				c.skip++
			}
		}
	}
}

// counts are the counts of everything written, the last line included.
func (c *testCounter) counts() *TestCounts {
	if len(c.line) > 0 {
		c.endLine()
	}
	if c.jest != "" {
		t := &TestCounts{Framework: "jest"}
		for _, kv := range jestCount.FindAllStringSubmatch(jestTests.FindStringSubmatch(c.jest)[1], -1) {
			n, _ := strconv.Atoi(kv[1])
			switch kv[2] {
			case "passed":
				t.Passed = n
			case "failed":
				t.Failed = n
			case "skipped", "todo":
				t.Skipped += n
			}
		}
		return t
	}
	if c.pytest != "" {
		t := &TestCounts{Framework: "pytest"}
		for _, kv := range pytestCount.FindAllStringSubmatch(pytestResult.FindStringSubmatch(c.pytest)[1], -1) {
			n, _ := strconv.Atoi(kv[1])
			switch kv[2] {
			case "passed":
				t.Passed = n
			case "failed", "error", "errors":
				t.Failed += n
			case "skipped":
				t.Skipped = n
			}
		}
		return t
	}
	if c.pass+c.fail+c.skip+c.open == 0 && c.ok == 0 && c.pkgBad == 0 {
		return nil
	}
	// A test started and never reported failed: its binary ended in it.
	t := &TestCounts{Framework: "go", Passed: c.pass, Failed: c.fail + c.open, Skipped: c.skip, PackagesOK: c.ok, PackagesFailed: c.pkgBad}
	// A package that failed to build has no --- FAIL line of its own.
	if t.Failed == 0 && c.pkgBad > 0 {
		t.Failed = c.pkgBad
	}
	if c.panicked && t.Failed == 0 {
		t.Failed = 1
	}
	return t
}

// pythonName matches python, python3, python3.12.
var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)?)?$`)

// testCommand reports whether argv runs tests (testFramework): a run of
// one that exits non-zero or is killed failed, whether or not it printed
// its counts (pytest and jest print them last).
func testCommand(argv []string) bool { return testFramework(argv) != "" }

// testFramework is the test framework argv runs ("" when none): go for
// go test, pytest for pytest (or python -m pytest), jest for jest (or npx
// jest, node …/jest) and for a package's test script (npm, yarn or pnpm
// test, or run test:unit and the like, which run jest or what the
// package names). Its counts are read
// from the run's output, and no other framework's: a package script
// printing go test's lines ran no go test (go test runs as itself, its
// lines framed and its binaries' ends checked).
func testFramework(argv []string) string {
	if goTestAt(argv) >= 0 {
		return "go"
	}
	if len(argv) == 0 {
		return ""
	}
	isPytest := func(s string) bool {
		return s == "pytest" || s == "py.test" || s == "pytest-3" || s == "py.test-3"
	}
	pytest := func(ok bool) string {
		if ok {
			return "pytest"
		}
		return ""
	}
	jest := func(ok bool) string {
		if ok {
			return "jest"
		}
		return ""
	}
	name, args := filepath.Base(argv[0]), argv[1:]
	// first is the first argument that is not a flag (after the
	// flags that take a value, which are skipped with it).
	first := func(valued ...string) (int, string) {
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case slices.Contains(valued, a):
				i++
			case !strings.HasPrefix(a, "-"):
				return i, a
			}
		}
		return -1, ""
	}
	switch {
	case isPytest(name):
		return "pytest"
	case name == "jest":
		return "jest"
	case pythonName.MatchString(name):
		for i := 0; i < len(args); i++ {
			switch a := args[i]; {
			case a == "-m":
				return pytest(i+1 < len(args) && isPytest(args[i+1]))
			case strings.HasPrefix(a, "-m"):
				return pytest(isPytest(a[2:]))
			case a == "-W" || a == "-X":
				i++
			case !strings.HasPrefix(a, "-"):
				return "" // a script
			}
		}
	case name == "node":
		_, a := first("-r", "--require", "--import")
		return jest(filepath.Base(a) == "jest" || filepath.Base(a) == "jest.js")
	case name == "npx":
		_, a := first("-p", "--package", "-c", "--call")
		return jest(a == "jest" || strings.HasPrefix(a, "jest@"))
	case name == "npm" || name == "yarn" || name == "pnpm":
		i, a := first("--prefix", "-C", "--cwd", "--dir", "-w", "--workspace", "--filter")
		// A test script: test, or one of its kind by the usual naming
		// (test:unit, test:e2e).
		script := func(s string) bool { return s == "test" || strings.HasPrefix(s, "test:") }
		if a == "run" || a == "run-script" {
			return jest(i+1 < len(args) && script(args[i+1]))
		}
		// yarn and pnpm run a script named as their command.
		return jest(a == "test" || a == "t" || a == "tst" || name != "npm" && script(a))
	}
	return ""
}
