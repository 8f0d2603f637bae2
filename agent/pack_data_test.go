package agent_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// wideData is a data source whose schema prompt is as long as the budget
// it is asked for, up to 20,000 bytes (a database with many tables).
type wideData struct{}

func (wideData) Tools() []coachd.Tool      { return nil }
func (wideData) Schema() coachd.DataSchema { return coachd.DataSchema{} }
func (wideData) Close() error              { return nil }
func (wideData) Prompt(budget int) string  { return strings.Repeat("t", min(budget, 20_000)) }

// The data schema an agent is given is written within that agent's
// context.budgets.data_schema (README: each section within its budget),
// not within the default 4,000 whatever the agent asked for.
func TestDataSchemaWithinAgentBudget(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{
		"agents/wide.md":   "---\nname: wide\ndescription: d\ncontext:\n  sections: [data_schema]\n  budgets:\n    data_schema: 12000\n---\nhi\n",
		"agents/narrow.md": "---\nname: narrow\ndescription: d\ncontext:\n  sections: [data_schema]\n  budgets:\n    data_schema: 1000\n---\nhi\n",
		"agents/plain.md":  "---\nname: plain\ndescription: d\ncontext:\n  sections: [data_schema]\n---\nhi\n",
		"data/app.yaml":    "dsn: sqlite:app.db\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644)
	}
	p, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins(),
		LoadData: func(string, []string) (agent.Data, error) { return wideData{}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"wide": 12000, "narrow": 1000, "plain": agent.DefaultBudgets[agent.SectionDataSchema]} {
		a, _ := p.Agent(name)
		if got := len(a.Context.DataSchema); got != want {
			t.Errorf("%s: schema of %d bytes, want %d", name, got, want)
		}
	}
}
