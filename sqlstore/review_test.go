package sqlstore_test

import (
	"context"
	"encoding/json"
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
				got, err := db.ListReviews(ctx, u.ID, "TASK-001")
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
				n, err := db.ListReviews(ctx, u.ID, "TASK-002")
				if err != nil || len(n) != 1 || n[0].Decision != nil {
					t.Fatalf("no decision: %+v %v", n, err)
				}
			})
			t.Run("ScopedToUser", func(t *testing.T) {
				got, err := db.ListReviews(ctx, other.ID, "TASK-001")
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
// holds lists its newest reviews (oldest first among them), so the
// decision of the latest iteration is always in the history.
func TestReviewHistoryKeepsNewest(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			var last *coachd.Review
			for range coachd.MaxPageLimit + 1 {
				clock.Add(time.Second)
				last = &coachd.Review{UserID: u.ID, TaskID: "TASK-001", Agent: "autobuild-coach"}
				if err := db.CreateReview(ctx, last); err != nil {
					t.Fatal(err)
				}
			}
			got, err := db.ListReviews(ctx, u.ID, "TASK-001")
			if err != nil || len(got) != coachd.MaxPageLimit {
				t.Fatalf("ListReviews = %d reviews, %v", len(got), err)
			}
			if got[len(got)-1].ID != last.ID {
				t.Fatalf("the latest review %s is not in the history (it ends with %s)", last.ID, got[len(got)-1].ID)
			}
			for i := 1; i < len(got); i++ {
				if !got[i-1].CreatedAt.Before(got[i].CreatedAt) {
					t.Fatalf("history not oldest first at %d", i)
				}
			}
		})
	}
}
