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
// ("./test/setup", "<rootDir>/test/setup.js"), its extension optional.
// An unchanged config is not the change's, but what it names is.
func (w *Workspace) jestNamed(changed []string) []string {
	texts := map[string]string{} // a directory's jest settings
	settings := func(d string) string {
		if s, ok := texts[d]; ok {
			return s
		}
		var b strings.Builder
		var pkg struct {
			Jest json.RawMessage `json:"jest"`
		}
		if json.Unmarshal(w.readConfig(path.Join(d, "package.json")), &pkg) == nil {
			b.Write(pkg.Jest)
		}
		for _, c := range jestConfigs {
			b.WriteByte('\n')
			b.Write(w.readConfig(path.Join(d, c)))
		}
		texts[d] = b.String()
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
			if s := settings(d); strings.Contains(s, r) && regexp.MustCompile(`["'](\./|/|<rootDir>/)?`+regexp.QuoteMeta(r)+`(\.\w+)?["']`).MatchString(s) {
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
