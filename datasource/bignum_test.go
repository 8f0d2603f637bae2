package datasource_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore/pgtest"
)

const bignumFile = `dsn: %s
user_key: name
tables:
  orders:
    scope: user_id
    columns: [code, total]
actions:
  add_order:
    description: Record an order.
    table: orders
    insert: {code: $code, total: $total}
    input_schema:
      type: object
      properties:
        code: {type: integer}
        total: {type: integer}
`

// TestBigIntegers: an integer past 64 bits (a 20-digit tracking number,
// an amount in a NUMERIC column) was bound as a float64: written, its
// last digits became zeros (12345678901234567890123 stored as
// "12345678901234567000000", or "1.23456789012346e+22" in SQLite text);
// as a where value it matched no row. It is bound as its digits: exact in
// text and NUMERIC columns, an error where the column cannot hold it.
func TestBigIntegers(t *testing.T) {
	const code, total = "12345678901234567890123", "98765432109876543210"
	for _, be := range []struct {
		name, driver, schema string
		dsn                  func() (string, string)
		exactTotal           bool // NUMERIC holds every digit (SQLite's is a REAL past 64 bits)
	}{
		{"sqlite", "sqlite", `CREATE TABLE orders (user_id TEXT NOT NULL, code TEXT, total NUMERIC)`,
			func() (string, string) { p := filepath.Join(t.TempDir(), "app.db"); return "sqlite:" + p, p }, false},
		{"postgres", "pgx", `CREATE TABLE orders (user_id text NOT NULL, code text, total numeric(30,0))`,
			func() (string, string) { d := pgtest.NewDatabase(t); return d, d }, true},
	} {
		t.Run(be.name, func(t *testing.T) {
			dsn, driverDSN := be.dsn()
			db, err := sql.Open(be.driver, driverDSN)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if _, err := db.Exec(be.schema); err != nil {
				t.Fatal(err)
			}
			tools := loadTools(t, fmt.Sprintf(bignumFile, dsn))
			if res := callTool(t, tools, "add_order", `{"code":`+code+`,"total":`+total+`}`); res.IsError {
				t.Fatalf("add_order: %s", res.Content)
			}
			var gotCode, gotTotal string
			if err := db.QueryRow(`SELECT code, CAST(total AS TEXT) FROM orders`).Scan(&gotCode, &gotTotal); err != nil {
				t.Fatal(err)
			}
			if gotCode != code {
				t.Errorf("code stored as %q, want %q", gotCode, code)
			}
			if be.exactTotal && gotTotal != total {
				t.Errorf("total stored as %q, want %q", gotTotal, total)
			}
			res := callTool(t, tools, "query_data", `{"table":"orders","where":{"code":`+code+`}}`)
			if res.IsError || !strings.Contains(res.Content, `"count":1`) {
				t.Errorf("where code = %s: %s", code, res.Content)
			}
		})
	}
}
