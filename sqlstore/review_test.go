package sqlstore_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func TestReviews(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			other := MustCreateUser(t, db, "b")
			t.Run("HistoryInOrder", func(t *testing.T) {
				first := &coachd.Review{UserID: u.ID, TaskID: "TASK-001", Agent: "autobuild-coach",
					Decision: json.RawMessage(`{"decision":"feedback"}`), Trace: json.RawMessage(`{"events":[]}`)}
				if err := db.CreateReview(ctx, first); err != nil {
					t.Fatal(err)
				}
				clock.Add(time.Minute)
				second := &coachd.Review{UserID: u.ID, TaskID: "TASK-001", Agent: "autobuild-coach", Approved: true,
					Decision: json.RawMessage(`{"decision":"approve"}`)}
				if err := db.CreateReview(ctx, second); err != nil {
					t.Fatal(err)
				}
				none := &coachd.Review{UserID: u.ID, TaskID: "TASK-002", Agent: "autobuild-coach"}
				if err := db.CreateReview(ctx, none); err != nil {
					t.Fatal(err)
				}
				got, _, err := db.ListReviews(ctx, u.ID, "TASK-001", coachd.Page{})
				if err != nil || len(got) != 2 {
					t.Fatalf("ListReviews = %d reviews, %v", len(got), err)
				}
				if got[0].ID != first.ID || got[0].Approved || string(got[0].Decision) != `{"decision":"feedback"}` ||
					string(got[0].Trace) != `{"events":[]}` || !got[0].CreatedAt.Equal(first.CreatedAt) {
					t.Fatalf("first = %+v", got[0])
				}
				if got[1].ID != second.ID || !got[1].Approved || string(got[1].Trace) != `{}` {
					t.Fatalf("second = %+v", got[1])
				}
				n, _, err := db.ListReviews(ctx, u.ID, "TASK-002", coachd.Page{})
				if err != nil || len(n) != 1 || n[0].Decision != nil {
					t.Fatalf("no decision: %+v %v", n, err)
				}
			})
			t.Run("ScopedToUser", func(t *testing.T) {
				got, _, err := db.ListReviews(ctx, other.ID, "TASK-001", coachd.Page{})
				if err != nil || len(got) != 0 {
					t.Fatalf("other user sees %d reviews, %v", len(got), err)
				}
				s := &coachd.Session{UserID: u.ID, Agent: "coach", Title: "t"}
				if err := db.CreateSession(ctx, s); err != nil {
					t.Fatal(err)
				}
				err = db.CreateReview(ctx, &coachd.Review{UserID: other.ID, TaskID: "T", Agent: "c", SessionID: s.ID})
				wantCode(t, err, coachd.ENOTFOUND)
			})
			t.Run("Invalid", func(t *testing.T) {
				for _, r := range []*coachd.Review{
					{UserID: u.ID, TaskID: "../etc", Agent: "c"},
					{UserID: u.ID, TaskID: "", Agent: "c"},
					{UserID: u.ID, TaskID: "T", Agent: "c", Decision: json.RawMessage(`{`)},
				} {
					wantCode(t, db.CreateReview(ctx, r), coachd.EINVALID)
				}
			})
		})
	}
}

// TestReviewHistoryKeepsNewest: a task reviewed more often than a page
// holds lists its newest reviews first (oldest first among them), so the
// decision of the latest iteration is always on the first page, and the
// cursor leads back through every earlier one, none twice.
func TestReviewHistoryKeepsNewest(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			var all []*coachd.Review
			for i := range coachd.MaxPageLimit + 1 {
				if i%2 == 0 {
					clock.Add(time.Second) // pairs share a time: the ID orders them
				}
				r := &coachd.Review{UserID: u.ID, TaskID: "TASK-001", Agent: "autobuild-coach"}
				if err := db.CreateReview(ctx, r); err != nil {
					t.Fatal(err)
				}
				all = append(all, r)
			}
			slices.SortFunc(all, func(a, b *coachd.Review) int {
				if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
					return c
				}
				return strings.Compare(a.ID, b.ID)
			})
			got, next, err := db.ListReviews(ctx, u.ID, "TASK-001", coachd.Page{Limit: coachd.MaxPageLimit})
			if err != nil || len(got) != coachd.MaxPageLimit || next == "" {
				t.Fatalf("ListReviews = %d reviews, next %q, %v", len(got), next, err)
			}
			if got[len(got)-1].ID != all[len(all)-1].ID {
				t.Fatalf("the latest review %s is not last on the first page (it ends with %s)", all[len(all)-1].ID, got[len(got)-1].ID)
			}
			for i := 1; i < len(got); i++ {
				if got[i-1].CreatedAt.After(got[i].CreatedAt) {
					t.Fatalf("page not oldest first at %d", i)
				}
			}
			rest, next, err := db.ListReviews(ctx, u.ID, "TASK-001", coachd.Page{Limit: coachd.MaxPageLimit, Cursor: next})
			if err != nil || len(rest) != 1 || next != "" || rest[0].ID != all[0].ID {
				t.Fatalf("second page = %d reviews, next %q, %v", len(rest), next, err)
			}
			// Small pages walk back through all of them in order.
			var walked []*coachd.Review
			cursor := ""
			for {
				page, next, err := db.ListReviews(ctx, u.ID, "TASK-001", coachd.Page{Limit: 7, Cursor: cursor})
				if err != nil || len(page) == 0 {
					t.Fatalf("page after %q: %d reviews, %v", cursor, len(page), err)
				}
				walked = append(page, walked...)
				if next == "" {
					break
				}
				cursor = next
			}
			if len(walked) != len(all) {
				t.Fatalf("walked %d reviews, want %d", len(walked), len(all))
			}
			for i := range all {
				if walked[i].ID != all[i].ID {
					t.Fatalf("review %d is %s, want %s", i, walked[i].ID, all[i].ID)
				}
			}
			_, _, err = db.ListReviews(ctx, u.ID, "TASK-001", coachd.Page{Cursor: "bm90IGEgY3Vyc29y"})
			wantCode(t, err, coachd.EINVALID)
		})
	}
}
