package datasource

import (
	"strings"
	"testing"
)

// FuzzParse: any data file is parsed or reported, never a panic, and a
// problem always names the file and a line.
func FuzzParse(f *testing.F) {
	f.Add("dsn: sqlite:app.db\ntables:\n  events: {scope: user_id, columns: [id, title]}\n")
	f.Add("dsn: ${DB:-x}\nactions:\n  a:\n    table: t\n    update: {key: id, match: [{input: x, column: y, fuzzy: true}], set: {a: $b, c: $$d, e: null}}\n")
	f.Add("tables: [1, 2]\nqueries: {q: {where: {a: [1]}}}\n")
	f.Fuzz(func(t *testing.T, data string) {
		probs := &problems{path: "data/x.yaml"}
		parse("data/x.yaml", []byte(data), func(string) string { return "" }, probs)
		for _, p := range probs.list {
			if !strings.HasPrefix(p, "data/x.yaml:") {
				t.Fatalf("problem without its file: %q", p)
			}
		}
	})
}
