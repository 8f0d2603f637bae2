package datasource_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestWideRowTooBig: a row whose chosen columns, each cut to what a cell
// shows, are more than a result holds was left out, and the first such
// row answered {"rows":[],"count":0,"truncated":true}: to the model, no
// rows. It is told the row does not fit and to ask for fewer columns;
// those columns then read.
func TestWideRowTooBig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cols, names []string
	for i := range 20 {
		cols = append(cols, fmt.Sprintf("c%d TEXT", i))
		names = append(names, fmt.Sprintf("c%d", i))
	}
	long := strings.Repeat("x", 3000)
	for _, q := range []string{
		`CREATE TABLE wide (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, ` + strings.Join(cols, ", ") + `)`,
		`INSERT INTO wide VALUES ('w1', 'alice'` + strings.Repeat(`, '`+long+`'`, 20) + `)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	tools := loadTools(t, `dsn: sqlite:`+path+`
user_key: name
tables:
  wide: {scope: user_id, columns: [id, `+strings.Join(names, ", ")+`]}
`)
	res := callTool(t, tools, "query_data", `{"table":"wide"}`)
	if !res.IsError || !strings.Contains(res.Content, "fewer columns") {
		t.Errorf("a row too big for a result: %+v", res)
	}
	if got := mustRows(t, callTool(t, tools, "query_data", `{"table":"wide","columns":["id","c0"]}`)); got.Count != 1 {
		t.Errorf("fewer columns: %+v", got)
	}
}
