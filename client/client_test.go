package client_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore"
)

const adminKey = "client-test-admin"

// MustServer runs the real server over a SQLite file and returns an admin
// client for it.
func MustServer(t *testing.T) (*client.Client, *sqlstore.DB, string) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "coachd.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Deps{Store: db, AdminKey: adminKey}))
	t.Cleanup(func() {
		srv.Close()
		db.Close()
	})
	return client.New(srv.URL+"/", adminKey, srv.Client()), db, srv.URL
}

func TestClient(t *testing.T) {
	ctx := context.Background()
	admin, db, url := MustServer(t)
	if err := admin.Healthz(ctx); err != nil {
		t.Fatal(err)
	}

	t.Run("Users", func(t *testing.T) {
		budget := int64(10)
		u, key, err := admin.CreateUser(ctx, "gina", &budget)
		if err != nil || u.TokenBudget != 10 || key == "" {
			t.Fatalf("create = %+v %q %v", u, key, err)
		}
		got, err := admin.User(ctx, u.ID)
		if err != nil || got.Name != "gina" {
			t.Fatalf("get = %+v, %v", got, err)
		}
		name, nb := "gina b", int64(20)
		got, err = admin.UpdateUser(ctx, u.ID, coachd.UserUpdate{Name: &name, TokenBudget: &nb})
		if err != nil || got.Name != name || got.TokenBudget != 20 {
			t.Fatalf("update = %+v, %v", got, err)
		}
		me, err := client.New(url, key, nil).Me(ctx)
		if err != nil || me.ID != u.ID {
			t.Fatalf("me = %+v, %v", me, err)
		}
	})

	_, key, err := admin.CreateUser(ctx, "hank", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := client.New(url, key, nil)

	t.Run("Sessions", func(t *testing.T) {
		var ids []string
		for range 5 {
			s, err := c.CreateSession(ctx, "coach", "")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, s.ID)
		}
		me, _ := c.Me(ctx)
		msgs := []*coachd.Message{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}, {Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("hello")}}}
		if err := db.AppendMessages(ctx, me.ID, ids[0], msgs); err != nil {
			t.Fatal(err)
		}
		// Walk every page: each session once, newest first.
		var seen []string
		page := coachd.Page{Limit: 2}
		for {
			list, next, err := c.ListSessions(ctx, page)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range list {
				seen = append(seen, s.ID)
			}
			if next == "" {
				break
			}
			page.Cursor = next
		}
		if len(seen) != 5 || seen[0] != ids[4] || seen[4] != ids[0] {
			t.Errorf("pages = %v, want %v reversed", seen, ids)
		}
		got, next, err := c.Messages(ctx, ids[0], coachd.Page{Limit: 1})
		if err != nil || len(got) != 1 || got[0].Content != "hi" || next == "" {
			t.Fatalf("messages = %v %q %v", got, next, err)
		}
		got, next, err = c.Messages(ctx, ids[0], coachd.Page{Cursor: next})
		if err != nil || len(got) != 1 || got[0].Blocks[0].Text != "hello" || next != "" {
			t.Fatalf("messages page 2 = %v %q %v", got, next, err)
		}
		if s, err := c.Session(ctx, ids[0]); err != nil || s.MessageCount != 2 {
			t.Fatalf("session = %+v, %v", s, err)
		}
		if err := c.DeleteSession(ctx, ids[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Session(ctx, ids[0]); coachd.ErrorCode(err) != coachd.ENOTFOUND {
			t.Fatalf("deleted session: %v", err)
		}
	})

	t.Run("Notes", func(t *testing.T) {
		n, err := c.CreateNote(ctx, client.NoteInput{Type: "insight", Title: "Rain", Content: "Rain doubles demand"})
		if err != nil || n.Importance != 50 {
			t.Fatalf("create = %+v, %v", n, err)
		}
		title, imp := "Rainy days", 80
		if n, err = c.UpdateNote(ctx, n.ID, coachd.NoteUpdate{Title: &title, Importance: &imp}); err != nil || n.Title != title || n.Importance != 80 {
			t.Fatalf("update = %+v, %v", n, err)
		}
		if n, err = c.TogglePin(ctx, n.ID); err != nil || !n.Pinned {
			t.Fatalf("pin = %+v, %v", n, err)
		}
		pinned := true
		if list, _, err := c.ListNotes(ctx, coachd.NoteFilter{Type: "insight", Pinned: &pinned}, coachd.Page{}); err != nil || len(list) != 1 {
			t.Fatalf("list = %v, %v", list, err)
		}
		if err := c.DeleteNote(ctx, n.ID); err != nil {
			t.Fatal(err)
		}
		if list, _, err := c.ListNotes(ctx, coachd.NoteFilter{}, coachd.Page{}); err != nil || len(list) != 0 {
			t.Fatalf("list after delete = %v, %v", list, err)
		}
		if st, err := c.NoteStats(ctx); err != nil || st.Deleted != 1 || st.Total != 0 {
			t.Fatalf("stats = %+v, %v", st, err)
		}
		if n, err = c.RestoreNote(ctx, n.ID); err != nil || n.DeletedAt != nil {
			t.Fatalf("restore = %+v, %v", n, err)
		}
		if got, err := c.Note(ctx, n.ID); err != nil || got.Title != title {
			t.Fatalf("get = %+v, %v", got, err)
		}
	})

	t.Run("ErrInvalid", func(t *testing.T) {
		_, err := c.CreateNote(ctx, client.NoteInput{Type: "tip", Title: "t", Content: "c", MarketSlug: "Dallas TX"})
		var e *coachd.Error
		if !errors.As(err, &e) || e.Code != coachd.EINVALID || len(e.Details) != 1 || e.Details[0].Field != "market_slug" {
			t.Fatalf("err = %#v", err)
		}
	})

	t.Run("ErrUnauthorized", func(t *testing.T) {
		_, err := client.New(url, "ck_nope", nil).Me(ctx)
		if coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
			t.Fatalf("err = %v", err)
		}
	})
}
