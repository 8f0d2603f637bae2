package review

import (
	"regexp"
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

var (
	goTestLine   = regexp.MustCompile(`(?m)^\s*--- (PASS|FAIL|SKIP): `)
	goPkgOK      = regexp.MustCompile(`(?m)^ok  \t?\s*\S+.*$`)
	goPkgFail    = regexp.MustCompile(`(?m)^(FAIL\t\S+|FAIL\s+\S+\s+[\d.]+s|FAIL\s+\S+ \[build failed\]|FAIL\s+\S+ \[setup failed\])`)
	pytestResult = regexp.MustCompile(`(?m)^(?:=+ )?((?:\d+ (?:passed|failed|skipped|errors?|xfailed|xpassed|deselected|warnings?)(?:, )?)+) in [\d.]+s`)
	pytestCount  = regexp.MustCompile(`(\d+) (passed|failed|skipped|errors?)`)
	jestTests    = regexp.MustCompile(`(?m)^Tests:\s+(.*\d+ total)`)
	jestCount    = regexp.MustCompile(`(\d+) (passed|failed|skipped|todo)`)
)

// ParseTestCounts reads go test, pytest or jest output; nil when none of
// them is recognised. It runs in time linear in the output (RE2).
func ParseTestCounts(out string) *TestCounts {
	if m := jestTests.FindAllStringSubmatch(out, -1); m != nil {
		c := &TestCounts{Framework: "jest"}
		for _, kv := range jestCount.FindAllStringSubmatch(m[len(m)-1][1], -1) {
			n, _ := strconv.Atoi(kv[1])
			switch kv[2] {
			case "passed":
				c.Passed = n
			case "failed":
				c.Failed = n
			case "skipped", "todo":
				c.Skipped += n
			}
		}
		return c
	}
	if m := pytestResult.FindAllStringSubmatch(out, -1); m != nil {
		c := &TestCounts{Framework: "pytest"}
		for _, kv := range pytestCount.FindAllStringSubmatch(m[len(m)-1][1], -1) {
			n, _ := strconv.Atoi(kv[1])
			switch kv[2] {
			case "passed":
				c.Passed = n
			case "failed", "error", "errors":
				c.Failed += n
			case "skipped":
				c.Skipped = n
			}
		}
		return c
	}
	tests := goTestLine.FindAllStringSubmatch(out, -1)
	ok, fail := 0, len(goPkgFail.FindAllStringIndex(out, -1))
	for _, line := range goPkgOK.FindAllString(out, -1) {
		if !strings.Contains(line, "[no tests to run]") { // a package that ran no test proves nothing
			ok++
		}
	}
	if len(tests) == 0 && ok == 0 && fail == 0 {
		return nil
	}
	c := &TestCounts{Framework: "go", PackagesOK: ok, PackagesFailed: fail}
	for _, t := range tests {
		switch t[1] {
		case "PASS":
			c.Passed++
		case "FAIL":
			c.Failed++
		case "SKIP":
			c.Skipped++
		}
	}
	// A package that failed to build has no --- FAIL line of its own.
	if c.Failed == 0 && fail > 0 {
		c.Failed = fail
	}
	if strings.Contains(out, "\npanic: ") && c.Failed == 0 {
		c.Failed = 1
	}
	return c
}
