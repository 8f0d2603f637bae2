package review

import (
	"encoding/json"
	"io"
	"path"
	"regexp"
	"strings"
)

// jestConfigs are jest's own config files; package.json's "jest" field
// is the other place its settings live.
var jestConfigs = []string{"jest.config.js", "jest.config.ts", "jest.config.mjs", "jest.config.cjs", "jest.config.json"}

// jestNamed are the paths among changed (changedPaths) that a jest config
// of their package, or of one above it, names: jest loads its
// setupFiles, setupFilesAfterEnv, globalSetup (into jest's own process),
// testEnvironment, transform, reporters and runner into the run, and any
// of them can rewrite its summary and exit code, whatever the tests do.
// A config names a file by a quoted path relative to its directory
// ("./test/setup", "<rootDir>/test/setup.js"), its extension optional;
// a config that is code also by its quoted name, which it joins to a
// path (path.join(__dirname, 'test', 'setup.js')). An unchanged config
// is not the change's, but what it names is.
func (w *Workspace) jestNamed(changed []string) []string {
	texts := map[string][2]string{} // a directory's jest settings: all, and those in code
	settings := func(d string) [2]string {
		if s, ok := texts[d]; ok {
			return s
		}
		var b, code strings.Builder
		var pkg struct {
			Jest json.RawMessage `json:"jest"`
		}
		if json.Unmarshal(w.readConfig(path.Join(d, "package.json")), &pkg) == nil {
			b.Write(pkg.Jest)
		}
		for _, c := range jestConfigs {
			text := w.readConfig(path.Join(d, c))
			b.WriteByte('\n')
			b.Write(text)
			if path.Ext(c) != ".json" {
				code.WriteByte('\n')
				code.Write(text)
			}
		}
		texts[d] = [2]string{b.String(), code.String()}
		return texts[d]
	}
	var named []string
	for _, p := range changed {
		if vendored(p) {
			continue
		}
		for d := path.Dir(p); ; d = path.Dir(d) {
			r := p
			if d != "." {
				r = strings.TrimPrefix(p, d+"/")
			}
			r = strings.TrimSuffix(r, path.Ext(r))
			name := path.Base(r)
			s := settings(d)
			if strings.Contains(s[0], r) && regexp.MustCompile(`["'](\./|/|<rootDir>/)?`+regexp.QuoteMeta(r)+`(\.\w+)?["']`).MatchString(s[0]) ||
				strings.Contains(s[1], name) && regexp.MustCompile(`["']`+regexp.QuoteMeta(name)+`(\.\w+)?["']`).MatchString(s[1]) {
				named = append(named, p)
				break
			}
			if d == "." {
				break
			}
		}
	}
	return named
}

// readConfig is the first MiB of the regular file p of the workspace; nil
// when there is none.
func (w *Workspace) readConfig(p string) []byte {
	f, fi, err := w.open(p)
	if err != nil {
		return nil
	}
	defer f.Close()
	if !fi.Mode().IsRegular() {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return b
}

// babelConfig reports whether the base name is babel's config: babel-jest,
// jest's default transform, compiles every test through it, and a plugin
// can rewrite what the tests assert.
func babelConfig(base string) bool {
	return base == ".babelrc" || strings.HasPrefix(base, ".babelrc.") || strings.HasPrefix(base, "babel.config.")
}

// jestNamed is Workspace.jestNamed of the review's workspace; nil outside
// one.
func (t *Trace) jestNamed(changed []string) []string {
	t.mu.Lock()
	ws := t.ws
	t.mu.Unlock()
	if ws == nil {
		return nil
	}
	return ws.jestNamed(changed)
}
