package server_test

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

type historyPage struct {
	TaskID     string           `json:"task_id"`
	Reviews    []*coachd.Review `json:"reviews"`
	NextCursor string           `json:"next_cursor"`
}

// getHistory reads one page of a task's review history.
func getHistory(t *testing.T, e *env, key, query string) (int, historyPage, []byte) {
	t.Helper()
	r := e.do(request{method: "GET", path: "/v1/reviews/TASK-1/history" + query, key: key})
	var p historyPage
	if r.status == 200 {
		if err := json.Unmarshal(r.body, &p); err != nil {
			t.Fatalf("history body: %v", err)
		}
	}
	return r.status, p, r.body
}

// TestReviewHistoryPages: a task's review history was its latest 200
// reviews with no way to page further, and each may carry a 1 MiB trace,
// so one answer could be ~200 MiB. It pages like the other lists
// (?limit, ?cursor, next_cursor), from the latest reviews back, each page
// oldest first, and a page ends early once its reviews hold 8 MiB.
func TestReviewHistoryPages(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	ctx := context.Background()
	create := func(trace string) *coachd.Review {
		r := &coachd.Review{UserID: e.alice.ID, TaskID: "TASK-1", Agent: "autobuild-coach", Trace: json.RawMessage(trace)}
		if err := e.db.CreateReview(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	var all []*coachd.Review
	for range 5 {
		all = append(all, create(`{"events":[]}`))
	}

	t.Run("OK", func(t *testing.T) {
		var got []*coachd.Review
		query, pages := "?limit=2", 0
		for {
			status, p, body := getHistory(t, e, e.alice.key, query)
			if status != 200 || p.TaskID != "TASK-1" || len(p.Reviews) > 2 {
				t.Fatalf("page %d: %d %s", pages, status, body)
			}
			pages++
			got = append(p.Reviews, got...) // each page precedes the one read before it
			if p.NextCursor == "" {
				break
			}
			if pages > 5 {
				t.Fatal("the history does not end")
			}
			query = "?limit=2&cursor=" + url.QueryEscape(p.NextCursor)
		}
		if pages != 3 || len(got) != len(all) {
			t.Fatalf("%d pages, %d reviews", pages, len(got))
		}
		for i := range all {
			if got[i].ID != all[i].ID {
				t.Fatalf("review %d is %s, want %s (oldest first)", i, got[i].ID, all[i].ID)
			}
		}
	})
	t.Run("FirstPageIsTheLatest", func(t *testing.T) {
		status, p, body := getHistory(t, e, e.alice.key, "")
		if status != 200 || len(p.Reviews) != len(all) || p.NextCursor != "" || p.Reviews[len(all)-1].ID != all[len(all)-1].ID {
			t.Fatalf("%d %s", status, body)
		}
		_, p, _ = getHistory(t, e, e.alice.key, "?limit=1")
		if len(p.Reviews) != 1 || p.Reviews[0].ID != all[len(all)-1].ID || p.NextCursor == "" {
			t.Fatalf("limit=1: %+v", p)
		}
	})
	t.Run("DefaultIsTheLatest200", func(t *testing.T) {
		// A client that never pages (seed 003 counts a task's
		// iterations) gets the latest 200, as before paging.
		for range 60 {
			all = append(all, create(`{"events":[]}`))
		}
		status, p, body := getHistory(t, e, e.alice.key, "")
		if status != 200 || len(p.Reviews) != len(all) || p.NextCursor != "" {
			t.Fatalf("no limit: %d, %d reviews of %d, next %q: %.200s", status, len(p.Reviews), len(all), p.NextCursor, body)
		}
	})
	t.Run("ErrBadQuery", func(t *testing.T) {
		for _, q := range []string{"?limit=0", "?limit=201", "?limit=x", "?cursor=%21%21", "?cursor=bm90IGEgY3Vyc29y"} {
			if status, _, body := getHistory(t, e, e.alice.key, q); status != 400 {
				t.Errorf("%s: %d %s", q, status, body)
			}
		}
	})
	t.Run("ScopedToUser", func(t *testing.T) {
		_, p, _ := getHistory(t, e, e.alice.key, "?limit=1")
		status, bob, body := getHistory(t, e, e.bob.key, "?cursor="+url.QueryEscape(p.NextCursor))
		if status != 200 || len(bob.Reviews) != 0 || bob.NextCursor != "" {
			t.Fatalf("bob with alice's cursor: %d %s", status, body)
		}
	})
	t.Run("PageBytesBounded", func(t *testing.T) {
		big := `{"pad":"` + strings.Repeat("x", coachd.ReviewTraceMax-10) + `"}`
		var heavy []*coachd.Review
		for range 10 {
			heavy = append(heavy, create(big))
		}
		status, p, body := getHistory(t, e, e.alice.key, "?limit=200")
		if status != 200 || len(body) > 9<<20 {
			t.Fatalf("first page: %d, %d bytes", status, len(body))
		}
		if len(p.Reviews) == 0 || len(p.Reviews) >= len(heavy) || p.NextCursor == "" {
			t.Fatalf("first page holds %d of %d heavy reviews, next %q", len(p.Reviews), len(heavy), p.NextCursor)
		}
		if p.Reviews[len(p.Reviews)-1].ID != heavy[len(heavy)-1].ID {
			t.Fatal("the first page does not end with the latest review")
		}
		seen := len(p.Reviews)
		for p.NextCursor != "" {
			status, p, body = getHistory(t, e, e.alice.key, "?limit=200&cursor="+url.QueryEscape(p.NextCursor))
			if status != 200 || len(body) > 9<<20 || len(p.Reviews) == 0 {
				t.Fatalf("next page: %d, %d bytes, %d reviews", status, len(body), len(p.Reviews))
			}
			seen += len(p.Reviews)
		}
		if seen != len(all)+len(heavy) {
			t.Fatalf("paged through %d reviews, want %d", seen, len(all)+len(heavy))
		}
	})
}
