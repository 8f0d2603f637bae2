package datasource_test

import (
	"runtime"
	"strings"
	"testing"
)

// TestBigCellsReadCut proves that query_data reads no more of a long
// text cell than it shows (maxCell): rows whose body is 1 MiB each come
// back cut as before, and the query allocates a small part of what the
// rows hold.
func TestBigCellsReadCut(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			e := openEnv(t, b)
			q := `UPDATE big SET body = ? WHERE id < 20`
			if b.name == "postgres" {
				q = `UPDATE big SET body = $1 WHERE id < 20`
			}
			long := strings.Repeat("é", 1<<19) // 1 MiB, two bytes a letter
			if _, err := e.db.Exec(q, long); err != nil {
				t.Fatal(err)
			}
			call := func() rowsResult {
				return mustRows(t, e.call(t, alice, "query_data", `{"table":"big","columns":["id","body"],"order_by":["id"]}`))
			}
			call() // warm up the connection
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got := call()
			runtime.ReadMemStats(&after)
			if got.Count == 0 || !got.Truncated {
				t.Fatalf("%d rows, truncated %v", got.Count, got.Truncated)
			}
			body, _ := got.Rows[0]["body"].(string)
			if want := strings.Repeat("é", 1000) + "…"; body != want {
				t.Fatalf("a 1 MiB cell came back as %d bytes, want %d", len(body), len(want))
			}
			held := got.Count << 20
			if n := after.TotalAlloc - before.TotalAlloc; n > uint64(held/8) {
				t.Fatalf("query_data allocated %d bytes to show %d rows cut from %d bytes of cells: it read them whole", n, got.Count, held)
			}
		})
	}
}
