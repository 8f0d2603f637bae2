package sqlstore_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func TestFiles(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			other := MustCreateUser(t, db, "b")
			t.Run("SaveReplaces", func(t *testing.T) {
				f := &coachd.File{UserID: u.ID, Type: "overview", Name: "overview", Content: "v1", Attributes: coachd.FileAttributes{Status: "good", DomainsTouched: []string{"health"}}}
				if err := db.SaveFile(ctx, f); err != nil {
					t.Fatal(err)
				}
				id, created := f.ID, f.CreatedAt
				clock.Add(time.Minute)
				g := &coachd.File{UserID: u.ID, Type: "overview", Name: "overview", Content: "version 2"}
				if err := db.SaveFile(ctx, g); err != nil {
					t.Fatal(err)
				}
				got, err := db.FindFile(ctx, u.ID, "overview", "overview")
				if err != nil || got.ID != id || !got.CreatedAt.Equal(created) || got.Content != "version 2" || got.Bytes != 9 || got.UpdatedAt.Equal(created) {
					t.Fatalf("got %+v %v", got, err)
				}
			})
			t.Run("ListNewestFirst", func(t *testing.T) {
				clock.Add(time.Minute)
				if err := db.SaveFile(ctx, &coachd.File{UserID: u.ID, Type: "day-plan", Name: "2026-03-01", Content: "x", Attributes: coachd.FileAttributes{Status: "in_crisis"}}); err != nil {
					t.Fatal(err)
				}
				all, err := db.ListFiles(ctx, u.ID, coachd.FileFilter{})
				if err != nil || len(all) != 2 || all[0].Type != "day-plan" || all[0].Attributes.Status != "in_crisis" {
					t.Fatalf("list %+v %v", all, err)
				}
				typed, _ := db.ListFiles(ctx, u.ID, coachd.FileFilter{Type: "overview"})
				since, _ := db.ListFiles(ctx, u.ID, coachd.FileFilter{Since: clock.Now()})
				if len(typed) != 1 || len(since) != 1 || since[0].Type != "day-plan" {
					t.Fatalf("typed %d since %d", len(typed), len(since))
				}
			})
			t.Run("ErrScoped", func(t *testing.T) {
				if _, err := db.FindFile(ctx, other.ID, "overview", "overview"); coachd.ErrorCode(err) != coachd.ENOTFOUND {
					t.Fatalf("another user's file: %v", err)
				}
				if l, _ := db.ListFiles(ctx, other.ID, coachd.FileFilter{}); len(l) != 0 {
					t.Fatalf("another user's files listed")
				}
			})
			t.Run("ErrInvalid", func(t *testing.T) {
				for _, f := range []*coachd.File{
					{UserID: u.ID, Type: "x", Name: "../etc"},
					{UserID: u.ID, Type: "x", Name: "a/b"},
					{UserID: u.ID, Type: "x", Name: "bad\x00name"},
					{UserID: u.ID, Type: "x", Name: strings.Repeat("n", 101)},
					{UserID: u.ID, Type: "x", Name: "ok", Content: strings.Repeat("c", coachd.FileContentMax+1)},
					{UserID: u.ID, Type: "x", Name: "ok", Attributes: coachd.FileAttributes{Status: "fine"}},
					{UserID: u.ID, Type: "x", Name: "ok", Attributes: coachd.FileAttributes{Timezone: "Mars/Base"}},
				} {
					if err := db.SaveFile(ctx, f); coachd.ErrorCode(err) != coachd.EINVALID {
						t.Errorf("%q: %v", f.Name, err)
					}
				}
			})
		})
	}
}
