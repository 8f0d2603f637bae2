package agent_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// A tool file or a data file that fails to load is the one problem its
// tools have: an agent naming them (in tools or contracts) is not also
// told they are unknown, while a name nothing would provide still is.
func TestPackFailedToolSourceOneCause(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"agents/a.md":       "---\nname: a\ndescription: d\ntools: [broken, query_data, latest, act, ghost]\ncontracts:\n  must_call: [latest]\n---\nhi\n",
		"tools/broken.yaml": "name: broken\n",
		"data/app.yaml":     "dsn: sqlite:app.db\nqueries:\n  latest: {table: t}\nactions:\n  act: {table: t}\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	_, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins(),
		LoadTool: func(string, []byte) (coachd.Tool, error) { return nil, errors.New("3: broken tool") },
		LoadData: func(string, []string) (agent.Data, error) { return nil, errors.New("1: dsn: cannot open app.db") }})
	var pe *agent.PackError
	if !errors.As(err, &pe) {
		t.Fatalf("err %v", err)
	}
	var got []string
	for _, p := range pe.Problems {
		got = append(got, p.File+": "+p.Message)
	}
	want := []string{`agents/a.md: unknown tool "ghost" (not built in, no tools/ghost.yaml)`,
		"data/app.yaml: dsn: cannot open app.db", "tools/broken.yaml: broken tool"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
