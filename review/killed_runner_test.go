package review

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestTestCommand: the command lines whose run is a test run whatever
// its output: killed before its summary, it failed.
func TestTestCommand(t *testing.T) {
	for line, want := range map[string]bool{
		"go test ./...":                 true,
		"pytest":                        true,
		"pytest -q tests/test_a.py":     true,
		"py.test -x":                    true,
		"pytest-3":                      true,
		"/usr/bin/pytest":               true,
		"python -m pytest":              true,
		"python3 -m pytest -q":          true,
		"python3.12 -B -m pytest":       true,
		"python3 -W ignore -m pytest":   true,
		"python3 -mpytest":              true,
		"jest":                          true,
		"./node_modules/.bin/jest --ci": true,
		"npx jest":                      true,
		"npx --yes jest src/a.test.js":  true,
		"node node_modules/.bin/jest":   true,
		"npm test":                      true,
		"npm t":                         true,
		"npm test -- src/a.test.js":     true,
		"npm run test":                  true,
		"npm --silent test":             true,
		"yarn test":                     true,
		"yarn --cwd web test":           true,
		"pnpm test":                     true,
		"npm --prefix web test":         true,
		"npm run test:unit":             true,
		"npm run-script test:e2e":       true,
		"yarn test:unit":                true,
		"pnpm run test:unit":            true,
		"pnpm -C web test:unit":         true,
		"npm run testdata":              false,
		"npm run test-server":           false,
		"yarn testdata":                 false,
		"python3 -m pip list":           false,
		"python3 script.py -m pytest":   false,
		"npx eslint .":                  false,
		"npm run lint":                  false,
		"npm install":                   false,
		"cat results.txt":               false,
		"node server.js":                false,
		"go vet ./...":                  false,
		"":                              false,
	} {
		if got := testCommand(strings.Fields(line)); got != want {
			t.Errorf("testCommand(%q) = %v, want %v", line, got, want)
		}
	}
}

// TestApprovalAfterAKilledRunner: pytest's and jest's whole-suite runs
// hang in a test and are killed at the timeout, before their summary
// line: no counts. A narrower run of the passing tests alone then
// passes, and the approval used to be recorded on it: only go test
// command lines were known as test runs when they printed no counts.
func TestApprovalAfterAKilledRunner(t *testing.T) {
	if testing.Short() {
		t.Skip("runs pytest and a jest")
	}
	review := func(t *testing.T, dir, all, one string) {
		t.Helper()
		tr := NewTrace("TASK-001")
		ws, err := NewWorkspace(dir, Options{Commands: []string{all, one}, Trace: tr, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() }) // the review's bytecode
		tools := toolMap(ws, tr)
		if res := call(t, tools, ValidateTool, validateInput); res.IsError {
			t.Fatalf("validate: %+v", res)
		}
		if res := call(t, tools, RunCommandTool, `{"command":"`+all+`"}`); !strings.Contains(res.Content, `"timed_out":true`) || !strings.Contains(res.Content, `"tests":null`) {
			t.Fatalf("%s: %s", all, res.Content)
		}
		if res := call(t, tools, RunCommandTool, `{"command":"`+one+`"}`); !strings.Contains(res.Content, `"exit_code":0`) || !strings.Contains(res.Content, `"passed":1`) {
			t.Fatalf("%s: %s", one, res.Content)
		}
		wantRefused(t, tools, "approval accepted after "+all+" was killed")
	}
	t.Run("pytest", func(t *testing.T) {
		if _, err := exec.LookPath("pytest"); err != nil {
			t.Skip("SKIPPED: pytest is not installed (apt-get install python3-pytest); TestTestCommand covers its command lines")
		}
		dir := t.TempDir()
		write(t, filepath.Join(dir, "tests", "test_a_hang.py"), "import time\n\ndef test_hang():\n    time.sleep(3600)\n")
		write(t, filepath.Join(dir, "tests", "test_ok.py"), "def test_ok():\n    assert 1 + 1 == 2\n")
		review(t, dir, "pytest -p no:cacheprovider", "pytest -p no:cacheprovider tests/test_ok.py")
	})
	// jest is not installed here: node_modules/.bin/jest is a script that
	// prints what jest prints (the whole suite hangs after its first
	// file), run through its launchers.
	for _, c := range [][2]string{{"npx jest", "npx jest src/ok.test.js"}, {"npm test", "npm test -- src/ok.test.js"},
		{"npm run test:unit", "npm run test:unit -- src/ok.test.js"}} {
		t.Run(c[0], func(t *testing.T) {
			for _, tool := range []string{"sh", "npm", "npx"} {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("SKIPPED: %s is not installed", tool)
				}
			}
			dir := t.TempDir()
			write(t, filepath.Join(dir, "package.json"), `{"name":"app","version":"1.0.0","private":true,"scripts":{"test":"jest","test:unit":"jest"}}`+"\n")
			jest := filepath.Join(dir, "node_modules", ".bin", "jest")
			write(t, jest, "#!/bin/sh\n"+
				"if [ $# -eq 0 ]; then\n"+
				"  echo ' PASS  src/a.test.js' >&2\n"+
				"  exec sleep 3600\n"+
				"fi\n"+
				"printf ' PASS  %s\\n  ✓ adds (2 ms)\\n\\nTest Suites: 1 passed, 1 total\\nTests:       1 passed, 1 total\\nSnapshots:   0 total\\nTime:        0.4 s\\nRan all test suites matching /%s/i.\\n' \"$1\" \"$1\" >&2\n")
			if err := os.Chmod(jest, 0o755); err != nil {
				t.Fatal(err)
			}
			review(t, dir, c[0], c[1])
		})
	}
}

// toolMap names a review's tools: the workspace's and the decision's.
func toolMap(ws *Workspace, tr *Trace) map[string]coachd.Tool {
	tools := map[string]coachd.Tool{}
	for _, tool := range append(ws.Tools(), DecisionTools(tr)...) {
		tools[tool.Definition().Name] = tool
	}
	return tools
}
