package sqlstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func testNotes(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	t.Run("Validation", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		u := MustCreateUser(t, db, "a")
		valid := func() *coachd.Note {
			return &coachd.Note{UserID: u.ID, Type: "tip", Category: "timing", Title: "Go early", Content: "Airport at 5am", MarketSlug: "dallas-tx"}
		}
		for _, tc := range []struct {
			name  string
			edit  func(n *coachd.Note)
			field string
		}{
			{"Type", func(n *coachd.Note) { n.Type = "gossip" }, "note_type"},
			{"Category", func(n *coachd.Note) { n.Category = "food" }, "category"},
			{"TitleEmpty", func(n *coachd.Note) { n.Title = "" }, "title"},
			{"TitleLong", func(n *coachd.Note) { n.Title = strings.Repeat("é", coachd.NoteTitleMax+1) }, "title"},
			{"ContentEmpty", func(n *coachd.Note) { n.Content = "" }, "content"},
			{"ContentLong", func(n *coachd.Note) { n.Content = strings.Repeat("x", coachd.NoteContentMax+1) }, "content"},
			{"ImportanceLow", func(n *coachd.Note) { n.Importance = -1 }, "importance"},
			{"ImportanceHigh", func(n *coachd.Note) { n.Importance = 101 }, "importance"},
			{"MarketSlug", func(n *coachd.Note) { n.MarketSlug = "Dallas TX" }, "market_slug"},
		} {
			t.Run("Err"+tc.name, func(t *testing.T) {
				n := valid()
				tc.edit(n)
				err := db.CreateNote(ctx, n)
				wantCode(t, err, coachd.EINVALID)
				if d := coachd.AsError(err).Details; len(d) != 1 || d[0].Field != tc.field {
					t.Fatalf("details = %+v, want one on %s", d, tc.field)
				}
			})
		}
		t.Run("OK", func(t *testing.T) {
			n := valid()
			n.Title = strings.Repeat("é", coachd.NoteTitleMax)
			if err := db.CreateNote(ctx, n); err != nil {
				t.Fatal(err)
			}
			if n.Importance != coachd.DefaultImportance || !coachd.ValidID(coachd.PrefixNote, n.ID) {
				t.Fatalf("created = %+v", n)
			}
			got, err := db.FindNote(ctx, u.ID, n.ID)
			if err != nil || !sameJSON(t, got, n) {
				t.Fatalf("FindNote = %+v, %v; want %+v", got, err, n)
			}
		})
		if got := rawCount(t, db, `SELECT COUNT(*) FROM notes`); got != 1 {
			t.Fatalf("%d notes stored, want only the valid one", got)
		}
		t.Run("ErrUpdate", func(t *testing.T) {
			n := valid()
			if err := db.CreateNote(ctx, n); err != nil {
				t.Fatal(err)
			}
			_, err := db.UpdateNote(ctx, u.ID, n.ID, coachd.NoteUpdate{Title: ptr("new"), Importance: ptr(101)})
			wantCode(t, err, coachd.EINVALID)
			got, _ := db.FindNote(ctx, u.ID, n.ID)
			if got.Title != n.Title || got.Importance != n.Importance {
				t.Fatalf("rejected update changed the note: %+v", got)
			}
		})
	})
	t.Run("UpdateAndPin", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		n := &coachd.Note{UserID: u.ID, Type: "tip", Title: "t", Content: "c"}
		if err := db.CreateNote(ctx, n); err != nil {
			t.Fatal(err)
		}
		clock.Add(time.Hour)
		got, err := db.UpdateNote(ctx, u.ID, n.ID, coachd.NoteUpdate{
			Type: ptr("insight"), Category: ptr("safety"), Title: ptr("T2"), Content: ptr("C2"),
			Importance: ptr(90), MarketSlug: ptr("austin-tx"), Pinned: ptr(true),
		})
		if err != nil {
			t.Fatal(err)
		}
		want := *n
		want.Type, want.Category, want.Title, want.Content, want.Importance, want.MarketSlug, want.Pinned =
			"insight", "safety", "T2", "C2", 90, "austin-tx", true
		want.UpdatedAt = clock.Now().UTC().Truncate(time.Microsecond)
		if found, _ := db.FindNote(ctx, u.ID, n.ID); !sameJSON(t, got, &want) || !sameJSON(t, found, &want) {
			t.Fatalf("updated = %+v, found %+v, want %+v", got, found, want)
		}
		for _, wantPinned := range []bool{false, true, false} {
			got, err := db.TogglePin(ctx, u.ID, n.ID)
			if err != nil || got.Pinned != wantPinned {
				t.Fatalf("TogglePin = %+v, %v; want pinned %v", got, err, wantPinned)
			}
			if found, _ := db.FindNote(ctx, u.ID, n.ID); found.Pinned != wantPinned {
				t.Fatalf("stored pinned = %v, want %v", found.Pinned, wantPinned)
			}
		}
	})
	t.Run("DeleteRestore", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		n := &coachd.Note{UserID: u.ID, Type: "tip", Title: "t", Content: "c"}
		if err := db.CreateNote(ctx, n); err != nil {
			t.Fatal(err)
		}
		// Restoring a live note returns it unchanged.
		got, err := db.RestoreNote(ctx, u.ID, n.ID)
		if err != nil || !sameJSON(t, got, n) {
			t.Fatalf("RestoreNote(live) = %+v, %v", got, err)
		}
		clock.Add(time.Minute)
		if err := db.DeleteNote(ctx, u.ID, n.ID); err != nil {
			t.Fatal(err)
		}
		wantCode(t, db.DeleteNote(ctx, u.ID, n.ID), coachd.ENOTFOUND)
		_, err = db.UpdateNote(ctx, u.ID, n.ID, coachd.NoteUpdate{Title: ptr("x")})
		wantCode(t, err, coachd.ENOTFOUND)
		_, err = db.TogglePin(ctx, u.ID, n.ID)
		wantCode(t, err, coachd.ENOTFOUND)
		found, err := db.FindNote(ctx, u.ID, n.ID)
		if err != nil || found.DeletedAt == nil || !found.DeletedAt.Equal(clock.Now().UTC().Truncate(time.Microsecond)) {
			t.Fatalf("FindNote(deleted) = %+v, %v; want DeletedAt set", found, err)
		}
		list, _, _ := db.ListNotes(ctx, u.ID, coachd.NoteFilter{}, coachd.Page{})
		if len(list) != 0 {
			t.Fatalf("deleted note listed: %+v", list)
		}
		list, _, _ = db.ListNotes(ctx, u.ID, coachd.NoteFilter{IncludeDeleted: true}, coachd.Page{})
		if len(list) != 1 || list[0].DeletedAt == nil {
			t.Fatalf("IncludeDeleted listing = %+v", list)
		}
		got, err = db.RestoreNote(ctx, u.ID, n.ID)
		if err != nil || got.DeletedAt != nil {
			t.Fatalf("RestoreNote = %+v, %v", got, err)
		}
		if found, _ := db.FindNote(ctx, u.ID, n.ID); found.DeletedAt != nil {
			t.Fatal("restore not stored")
		}
		_, err = db.RestoreNote(ctx, u.ID, "note_00000000000000000000000000")
		wantCode(t, err, coachd.ENOTFOUND)
	})
	t.Run("ListFiltersOrderStats", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := MustCreateUser(t, db, "a")
		spec := []struct {
			typ, cat   string
			importance int
			pinned     bool
			deleted    bool
		}{
			{"tip", "timing", 50, false, false},
			{"tip", "timing", 80, false, false},
			{"tip", "", 80, true, false},
			{"insight", "safety", 10, true, false},
			{"insight", "safety", 50, false, true},
			{"preference", "", 50, false, false},
			{"tip", "location", 50, false, false}, // same time as the previous one
			{"pattern", "earnings", 100, false, false},
		}
		var live []*coachd.Note
		for i, sp := range spec {
			if i != 6 {
				clock.Add(time.Second)
			}
			n := &coachd.Note{UserID: u.ID, Type: sp.typ, Category: sp.cat, Title: "t", Content: "c", Importance: sp.importance, Pinned: sp.pinned}
			if err := db.CreateNote(ctx, n); err != nil {
				t.Fatal(err)
			}
			if sp.deleted {
				if err := db.DeleteNote(ctx, u.ID, n.ID); err != nil {
					t.Fatal(err)
				}
				continue
			}
			live = append(live, n)
		}
		want := slices.Clone(live)
		slices.SortFunc(want, func(a, b *coachd.Note) int {
			switch {
			case a.Pinned != b.Pinned:
				if a.Pinned {
					return -1
				}
				return 1
			case a.Importance != b.Importance:
				return b.Importance - a.Importance
			case !a.CreatedAt.Equal(b.CreatedAt):
				return b.CreatedAt.Compare(a.CreatedAt)
			}
			return strings.Compare(b.ID, a.ID)
		})
		list := func(f coachd.NoteFilter, limit int) []*coachd.Note {
			t.Helper()
			var all []*coachd.Note
			cursor := ""
			for range 20 {
				page, next, err := db.ListNotes(ctx, u.ID, f, coachd.Page{Cursor: cursor, Limit: limit})
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, page...)
				if next == "" {
					return all
				}
				cursor = next
			}
			t.Fatal("pagination does not end")
			return nil
		}
		ids := func(ns []*coachd.Note) []string {
			var out []string
			for _, n := range ns {
				out = append(out, n.ID)
			}
			return out
		}
		for _, limit := range []int{0, 1, 2, 3} {
			if got := list(coachd.NoteFilter{}, limit); !slices.Equal(ids(got), ids(want)) {
				t.Fatalf("limit %d order = %v, want %v", limit, ids(got), ids(want))
			}
		}
		filter := func(keep func(*coachd.Note) bool) []string {
			var out []*coachd.Note
			for _, n := range want {
				if keep(n) {
					out = append(out, n)
				}
			}
			return ids(out)
		}
		if got := list(coachd.NoteFilter{Type: "tip"}, 2); !slices.Equal(ids(got), filter(func(n *coachd.Note) bool { return n.Type == "tip" })) || len(got) != 4 {
			t.Fatalf("type filter = %v", ids(got))
		}
		if got := list(coachd.NoteFilter{Category: "timing"}, 1); !slices.Equal(ids(got), filter(func(n *coachd.Note) bool { return n.Category == "timing" })) || len(got) != 2 {
			t.Fatalf("category filter = %v", ids(got))
		}
		if got := list(coachd.NoteFilter{Pinned: ptr(true)}, 0); !slices.Equal(ids(got), filter(func(n *coachd.Note) bool { return n.Pinned })) || len(got) != 2 {
			t.Fatalf("pinned filter = %v", ids(got))
		}
		if got := list(coachd.NoteFilter{Pinned: ptr(false), Type: "tip"}, 0); len(got) != 3 {
			t.Fatalf("unpinned tips = %v", ids(got))
		}
		if got := list(coachd.NoteFilter{IncludeDeleted: true, Type: "insight"}, 1); len(got) != 2 {
			t.Fatalf("insights incl. deleted = %v", ids(got))
		}
		_, _, err := db.ListNotes(ctx, u.ID, coachd.NoteFilter{Type: "gossip"}, coachd.Page{})
		wantCode(t, err, coachd.EINVALID)
		for _, c := range []string{"%%%", encodeB64("1:50:0"), encodeB64("2:50:0:note_00000000000000000000000000"), encodeB64("1:x:0:note_00000000000000000000000000")} {
			_, _, err := db.ListNotes(ctx, u.ID, coachd.NoteFilter{}, coachd.Page{Cursor: c})
			wantCode(t, err, coachd.EINVALID)
		}

		st, err := db.NoteStats(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		wantStats := &coachd.NoteStats{
			Total: 7, Pinned: 2, Deleted: 1,
			ByType:     map[string]int64{"tip": 4, "insight": 1, "preference": 1, "pattern": 1},
			ByCategory: map[string]int64{"timing": 2, "safety": 1, "location": 1, "earnings": 1},
		}
		if !sameJSON(t, st, wantStats) {
			t.Fatalf("stats = %+v, want %+v", st, wantStats)
		}
		empty, err := db.NoteStats(ctx, MustCreateUser(t, db, "b").ID)
		if err != nil || empty.Total != 0 || empty.ByType == nil || empty.ByCategory == nil {
			t.Fatalf("empty stats = %+v, %v", empty, err)
		}
	})
}
