package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
)

// openCached opens a SQLite file through the statement-caching connector
// with one connection, so every query below shares one cache.
func openCached(t *testing.T) (*sql.DB, *sql.Conn) {
	t.Helper()
	c, err := newStmtCacheConnector(sqliteDSN(filepath.Join(t.TempDir(), "c.db"), true), true)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if _, err := conn.ExecContext(context.Background(), `CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT)`); err != nil {
		t.Fatal(err)
	}
	return db, conn
}

func cacheOf(t *testing.T, conn *sql.Conn) *cachingConn {
	var cc *cachingConn
	if err := conn.Raw(func(dc any) error { cc = dc.(*cachingConn); return nil }); err != nil {
		t.Fatal(err)
	}
	return cc
}

func TestStmtCacheReusesStatements(t *testing.T) {
	ctx := context.Background()
	_, conn := openCached(t)
	for i := range 50 {
		if _, err := conn.ExecContext(ctx, `INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("v", i)); err != nil {
			t.Fatal(err)
		}
	}
	var v string
	for i := range 50 {
		if err := conn.QueryRowContext(ctx, `SELECT v FROM t WHERE k = ?`, i).Scan(&v); err != nil || v != fmt.Sprint("v", i) {
			t.Fatalf("row %d: %q, %v", i, v, err)
		}
	}
	cc := cacheOf(t, conn)
	// CREATE, INSERT and SELECT: three statements for 101 calls.
	if len(cc.stmts) != 3 {
		t.Fatalf("cache holds %d statements, want 3: %v", len(cc.stmts), cc.order)
	}
}

// A query run again while its own rows are still open must not reset them.
func TestStmtCacheNestedSameQuery(t *testing.T) {
	ctx := context.Background()
	_, conn := openCached(t)
	for i := range 5 {
		conn.ExecContext(ctx, `INSERT INTO t (k, v) VALUES (?, ?)`, i, fmt.Sprint("v", i))
	}
	const q = `SELECT k, v FROM t WHERE k >= ? ORDER BY k`
	outer, err := conn.QueryContext(ctx, q, 0)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for outer.Next() {
		var k int
		var v string
		if err := outer.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if k != seen {
			t.Fatalf("outer row %d has k=%d: the inner query reset the outer statement", seen, k)
		}
		seen++
		// Same SQL while the outer rows are open: runs uncached. (database/sql
		// refuses a second query on a Conn with open rows only for Tx; a Conn
		// allows it, as the store's helpers might.)
		inner, err := conn.QueryContext(ctx, q, k)
		if err != nil {
			t.Fatal(err)
		}
		{
			n := 0
			for inner.Next() {
				n++
			}
			inner.Close()
			if n != 5-k {
				t.Fatalf("inner query from %d saw %d rows, want %d", k, n, 5-k)
			}
		}
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	if seen != 5 {
		t.Fatalf("outer saw %d rows, want 5", seen)
	}
}

// Past maxCachedStmts, the oldest statements are dropped and still work.
func TestStmtCacheBounded(t *testing.T) {
	ctx := context.Background()
	_, conn := openCached(t)
	for i := range maxCachedStmts + 40 {
		q := fmt.Sprintf(`SELECT %d + ?`, i)
		var n int
		if err := conn.QueryRowContext(ctx, q, 1).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	cc := cacheOf(t, conn)
	if len(cc.stmts) != maxCachedStmts || len(cc.order) != maxCachedStmts {
		t.Fatalf("cache holds %d statements (%d in order), want %d", len(cc.stmts), len(cc.order), maxCachedStmts)
	}
	var n int
	if err := conn.QueryRowContext(ctx, `SELECT 0 + ?`, 7).Scan(&n); err != nil || n != 7 {
		t.Fatalf("an evicted query run again: %d, %v", n, err)
	}
}
