package review

import (
	"fmt"
	"path"
	"slices"
	"strings"
)

// harnessNames are the files that decide what a pytest or jest run
// reports, whatever the tests do: a conftest.py hook can turn a failure
// into a pass, pytest's settings (pytest.ini, pyproject.toml, setup.cfg,
// tox.ini) can load such a plugin or deselect tests, and a package.json
// test script or jest config can print jest's summary without running
// anything. sitecustomize.py runs in every Python started there. npm
// (and pnpm) read a project's .npmrc, yarn its .yarnrc or .yarnrc.yml,
// for every script: node-options preloads a module into each node process
// (one can rewrite jest's summary and exit code), script-shell or
// yarnPath replaces what runs the script.
var harnessNames = []string{"conftest.py", "pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini", "package.json", "sitecustomize.py", "usercustomize.py",
	".npmrc", ".yarnrc", ".yarnrc.yml"}

// harnessPathspecs are harnessNames (and jest's configs) as git
// pathspecs, for gitChanged: ones its other pathspecs may not match.
func harnessPathspecs() []string {
	specs := []string{"*jest.config.json", "*.babelrc", "*.babelrc.json", "*babel.config.json",
		// Sourceless modules that can shadow pytest's or the standard
		// library's (pyShadowing): at the top, or a package's __init__.
		":(glob)*.pyc", ":(glob)*.so", ":(glob)*/__init__.pyc", ":(glob)*/__init__*.so"}
	for _, n := range harnessNames {
		specs = append(specs, "*"+n)
	}
	return specs
}

// isHarness reports whether the workspace path p is a harness file.
func isHarness(p string) bool {
	base := path.Base(p)
	return slices.Contains(harnessNames, base) || strings.HasPrefix(base, "jest.config.") || babelConfig(base) || pyShadowing(p)
}

// unreviewedHarness are the harness files among paths (changedPaths),
// but a dependency's (vendored: git lists node_modules' untracked files
// too), that the decision's test_config_reviewed does not name: a test run's
// pass is what the change's own harness says it is, so an approval must
// say the coach read each one. Installed code that autobuild saw the
// player change (seen: Request.Changed), or that git tracks and shows
// changed, is harness too: node_modules' jest, a virtualenv's pytest or
// plugins run the tests. So are named:
// the files a jest config names (jestNamed), its setup files, transforms,
// reporters, and the modules that take the standard library's place from
// a directory pytest puts on sys.path (pyShadowed).
func unreviewedHarness(paths, seen, named []string, reviewed []ConfigReviewed) []string {
	var names []string
	for _, r := range reviewed {
		if p, err := rel(strings.TrimSpace(r.File)); err == nil {
			names = append(names, p)
		}
	}
	var missing []string
	for _, p := range paths {
		harness := isHarness(p) && !vendored(p) || slices.Contains(named, p) || vendored(p) && !cached(p) && slices.Contains(seen, p)
		if harness && !slices.Contains(names, p) {
			missing = append(missing, p)
		}
	}
	return missing
}

// cached reports whether p is in a cache no command of the coach's reads:
// Python's bytecode (scrubbedEnv's PYTHONPYCACHEPREFIX) and pytest's
// cache (read for --lf, which runs part of the suite).
func cached(p string) bool {
	dirs := strings.Split(path.Dir(p), "/")
	return slices.Contains(dirs, "__pycache__") || slices.Contains(dirs, ".pytest_cache")
}

// ConfigReviewed is one entry of a decision's test_config_reviewed: a
// harness file the change touches, and what the coach checked in it.
type ConfigReviewed struct {
	File string `json:"file"`
	Note string `json:"note"`
}

// harnessRefusal is the approval's refusal when harness files of the
// change are not named in test_config_reviewed.
func harnessRefusal(missing []string) string {
	more := ""
	if len(missing) > 10 {
		missing, more = missing[:10], fmt.Sprintf(" and %d more", len(missing)-10)
	}
	return fmt.Sprintf("approval refused: the change under review touches %s%s, which decides what a test run reports "+
		"(a conftest.py hook, a pytest or jest setting, a package.json test script, a module python -m pytest imports in place of pytest's own or the standard library's, a jest setup file, transform or reporter its config names, a babel config, or installed code the run loads, such as node_modules' jest, can make failing tests read as passing), "+
		"so a passing run does not prove the tests pass: read each one and, if it does not alter the results, name it in "+
		"test_config_reviewed ({\"file\", \"note\": what you checked}); otherwise record feedback", strings.Join(missing, ", "), more)
}
