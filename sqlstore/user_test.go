package sqlstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func testUsers(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	t.Run("OK", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		u := &coachd.User{Name: "ann", TokenBudget: 5000, TokensUsed: 7}
		if err := db.CreateUser(ctx, u, "h1"); err != nil {
			t.Fatal(err)
		}
		if !coachd.ValidID(coachd.PrefixUser, u.ID) {
			t.Fatalf("ID = %q", u.ID)
		}
		wantTime := clock.Now().UTC().Truncate(time.Microsecond)
		if !u.CreatedAt.Equal(wantTime) || !u.UpdatedAt.Equal(wantTime) {
			t.Fatalf("timestamps = %v, %v, want %v", u.CreatedAt, u.UpdatedAt, wantTime)
		}
		got, err := db.FindUserByID(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		if *got != *u {
			t.Fatalf("FindUserByID = %+v, want %+v", got, u)
		}
		got, err = db.FindUserByKeyHash(ctx, "h1")
		if err != nil || got.ID != u.ID {
			t.Fatalf("FindUserByKeyHash = %+v, %v", got, err)
		}
		clock.Add(time.Minute)
		upd, err := db.UpdateUser(ctx, u.ID, coachd.UserUpdate{Name: ptr("bob"), TokenBudget: ptr[int64](9)})
		if err != nil {
			t.Fatal(err)
		}
		got, _ = db.FindUserByID(ctx, u.ID)
		if *got != *upd || got.Name != "bob" || got.TokenBudget != 9 || got.TokensUsed != 7 ||
			!got.UpdatedAt.Equal(wantTime.Add(time.Minute)) || !got.CreatedAt.Equal(wantTime) {
			t.Fatalf("after update = %+v (returned %+v)", got, upd)
		}
	})
	t.Run("ErrDuplicateKeyHash", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		MustCreateUser(t, db, "a")
		err := db.CreateUser(ctx, &coachd.User{Name: "b"}, "hash-a")
		wantCode(t, err, coachd.ECONFLICT)
	})
	t.Run("ErrInvalid", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		wantCode(t, db.CreateUser(ctx, &coachd.User{}, ""), coachd.EINVALID)
		wantCode(t, db.CreateUser(ctx, &coachd.User{TokenBudget: -1}, "x"), coachd.EINVALID)
		u := MustCreateUser(t, db, "a")
		_, err := db.UpdateUser(ctx, u.ID, coachd.UserUpdate{TokenBudget: ptr[int64](-5)})
		wantCode(t, err, coachd.EINVALID)
	})
	t.Run("ErrNotFound", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		_, err := db.FindUserByID(ctx, "usr_00000000000000000000000000")
		wantCode(t, err, coachd.ENOTFOUND)
		_, err = db.FindUserByKeyHash(ctx, "nope")
		wantCode(t, err, coachd.ENOTFOUND)
		_, err = db.UpdateUser(ctx, "usr_00000000000000000000000000", coachd.UserUpdate{Name: ptr("x")})
		wantCode(t, err, coachd.ENOTFOUND)
	})
	t.Run("List", func(t *testing.T) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		var want []string
		for _, n := range []string{"a", "b", "c", "d", "e"} {
			want = append(want, MustCreateUser(t, db, n).ID)
			clock.Add(time.Millisecond) // IDs are time-ordered by the millisecond
		}
		var got []string
		cursor, pages := "", 0
		for {
			users, next, err := db.ListUsers(ctx, coachd.Page{Cursor: cursor, Limit: 2})
			if err != nil {
				t.Fatal(err)
			}
			pages++
			for _, u := range users {
				got = append(got, u.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		if pages != 3 || len(got) != len(want) {
			t.Fatalf("pages = %d, ids = %v, want 3 pages of %v", pages, got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("ids = %v, want %v", got, want)
			}
		}
		_, _, err := db.ListUsers(ctx, coachd.Page{Cursor: "!!"})
		wantCode(t, err, coachd.EINVALID)
	})
}

// TestUserNamesAndDelete: names are unique (create and rename), and a
// deleted user's data goes with them.
func TestUserNamesAndDelete(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			a := MustCreateUser(t, db, "ada")
			other := MustCreateUser(t, db, "bo")
			wantCode(t, db.CreateUser(ctx, &coachd.User{Name: "ada"}, "hash-2"), coachd.ECONFLICT)
			name := "ada"
			_, err := db.UpdateUser(ctx, other.ID, coachd.UserUpdate{Name: &name})
			wantCode(t, err, coachd.ECONFLICT)
			if _, err := db.UpdateUser(ctx, a.ID, coachd.UserUpdate{Name: &name}); err != nil {
				t.Fatalf("renaming to one's own name: %v", err)
			}
			s := MustCreateSession(t, db, a.ID)
			if err := db.CreateNote(ctx, &coachd.Note{UserID: a.ID, Type: "tip", Title: "t", Content: "c"}); err != nil {
				t.Fatal(err)
			}
			if err := db.DeleteUser(ctx, a.ID); err != nil {
				t.Fatal(err)
			}
			_, err = db.FindUserByID(ctx, a.ID)
			wantCode(t, err, coachd.ENOTFOUND)
			_, err = db.FindSession(ctx, a.ID, s.ID)
			wantCode(t, err, coachd.ENOTFOUND)
			if n := rawCount(t, db, `SELECT COUNT(*) FROM notes`); n != 0 {
				t.Fatalf("%d notes left", n)
			}
			wantCode(t, db.DeleteUser(ctx, a.ID), coachd.ENOTFOUND)
			if _, err := db.FindUserByID(ctx, other.ID); err != nil {
				t.Fatalf("another user went too: %v", err)
			}
		})
	}
}

// TestUserNamesConcurrent: names stay unique when creates and renames to
// one name run at once (two replicas starting with --demo, two admins),
// not only one after another.
func TestUserNamesConcurrent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			const n = 8
			var others [n]*coachd.User
			for i := range others {
				others[i] = MustCreateUser(t, db, fmt.Sprintf("user-%d", i))
			}
			start := make(chan struct{})
			errs := make(chan error, 2*n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					errs <- db.CreateUser(ctx, &coachd.User{Name: "demo"}, fmt.Sprintf("hash-demo-%d", i))
				})
				wg.Go(func() {
					<-start
					name := "demo"
					_, err := db.UpdateUser(ctx, others[i].ID, coachd.UserUpdate{Name: &name})
					errs <- err
				})
			}
			close(start)
			wg.Wait()
			close(errs)
			ok := 0
			for err := range errs {
				if err == nil {
					ok++
				} else if coachd.ErrorCode(err) != coachd.ECONFLICT {
					t.Fatalf("unexpected error: %v", err)
				}
			}
			if named := rawCount(t, db, `SELECT COUNT(*) FROM users WHERE name = 'demo'`); ok != 1 || named != 1 {
				t.Fatalf("%d writes of the name succeeded, %d users are called demo; want 1 and 1", ok, named)
			}
		})
	}
}
