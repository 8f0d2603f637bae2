package datasource_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// TestActionBusy: an action the app's database cannot take within the
// time cap (the app holds its write lock) was told to the model as a
// slow query: "narrow it with where or a smaller limit", which no action
// has. It says the write did not happen and can be tried again, and it
// did not happen.
func TestActionBusy(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE orders (user_id TEXT NOT NULL, code TEXT, total NUMERIC)`); err != nil {
		t.Fatal(err)
	}
	tools := loadTools(t, fmt.Sprintf(strings.Replace(bignumFile, "user_key: name\n", "user_key: name\ntimeout: 300ms\n", 1), "sqlite:"+path))
	app, err := db.Begin() // the app is writing
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.Exec(`INSERT INTO orders VALUES ('bob', 'b1', 1)`); err != nil {
		t.Fatal(err)
	}
	res := callTool(t, tools, "add_order", `{"code":7,"total":8}`)
	if err := app.Rollback(); err != nil {
		t.Fatal(err)
	}
	if !res.IsError || strings.Contains(res.Content, "where") || !strings.Contains(res.Content, "add_order") ||
		!strings.Contains(res.Content, "nothing was written") {
		t.Errorf("a write the database was too busy for: %q", res.Content)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM orders`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows (%v): the refused write happened", n, err)
	}
}
