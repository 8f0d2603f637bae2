package datasource

import (
	"regexp"
	"testing"
)

var problemRe = regexp.MustCompile(`^data/x\.yaml:[0-9]+: [^\n]*$`)

// FuzzParse: any data file is parsed or reported, never a panic, and a
// problem is always one line that names the file and a line number (the
// pack loader reads Load's error line by line as "file:line: message").
func FuzzParse(f *testing.F) {
	f.Add("dsn: sqlite:app.db\ntables:\n  events: {scope: user_id, columns: [id, title]}\n")
	f.Add("dsn: ${DB:-x}\nactions:\n  a:\n    table: t\n    update: {key: id, match: [{input: x, column: y, fuzzy: true}], set: {a: $b, c: $$d, e: null}}\n")
	f.Add("tables: [1, 2]\nqueries: {q: {where: {a: [1]}}}\n")
	f.Add("queries:\n  \"top\\nshelf\": {table: t}\nactions: {a: {insert: {x: !!int abc}}}\n")
	f.Fuzz(func(t *testing.T, data string) {
		probs := &problems{path: "data/x.yaml"}
		parse("data/x.yaml", []byte(data), func(string) string { return "" }, probs)
		for _, p := range probs.list {
			if !problemRe.MatchString(p) {
				t.Fatalf("not one file:line: message line: %q", p)
			}
		}
	})
}
