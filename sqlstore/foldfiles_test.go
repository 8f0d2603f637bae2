package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestFoldFiles: FoldFiles marks one user's files of one type folded and
// changes nothing else: their content, other attributes and update time
// stay, other types and other users' files are left alone.
func TestFoldFiles(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			other := MustCreateUser(t, db, "b")
			for _, f := range []*coachd.File{
				{UserID: u.ID, Type: "capture", Name: "c1", Content: "call mum", Attributes: coachd.FileAttributes{Mood: "calm"}},
				{UserID: u.ID, Type: "capture", Name: "c2", Content: "book dentist", Attributes: coachd.FileAttributes{Folded: true}},
				{UserID: u.ID, Type: "day-plan", Name: "d", Content: "plan"},
				{UserID: other.ID, Type: "capture", Name: "c1", Content: "theirs"},
			} {
				if err := db.SaveFile(ctx, f); err != nil {
					t.Fatal(err)
				}
			}
			before, _ := db.FindFile(ctx, u.ID, "capture", "c1")
			clock.Add(time.Hour)
			if n, err := db.FoldFiles(ctx, u.ID, "capture"); err != nil || n != 1 {
				t.Fatalf("FoldFiles = %d, %v; want 1 (c2 was folded already)", n, err)
			}
			got, err := db.FindFile(ctx, u.ID, "capture", "c1")
			if err != nil || !got.Attributes.Folded || got.Attributes.Mood != "calm" || got.Content != "call mum" || !got.UpdatedAt.Equal(before.UpdatedAt) {
				t.Fatalf("c1 after the fold: %+v %v", got, err)
			}
			if f, _ := db.FindFile(ctx, u.ID, "day-plan", "d"); f.Attributes.Folded {
				t.Fatal("another type was folded")
			}
			if f, _ := db.FindFile(ctx, other.ID, "capture", "c1"); f.Attributes.Folded {
				t.Fatal("another user's capture was folded")
			}
			if n, err := db.FoldFiles(ctx, u.ID, "capture"); err != nil || n != 0 {
				t.Fatalf("second fold = %d, %v", n, err)
			}
		})
	}
}
