package sqlstore_test

import (
	"context"
	"sync"
	"testing"

	"github.com/coachd/coachd/sqlstore"
)

// runStoreSuite runs the conformance suite against fresh databases made by
// newDSN. It takes a DSN maker rather than an open function because some
// tests open one database twice (two "processes") or inject a clock.
func runStoreSuite(t *testing.T, newDSN func(tb testing.TB) string) {
	t.Run("Open", func(t *testing.T) { testOpen(t, newDSN) })
	t.Run("Migrate", func(t *testing.T) { testMigrate(t, newDSN) })
	t.Run("Users", func(t *testing.T) { testUsers(t, newDSN) })
	t.Run("Sessions", func(t *testing.T) { testSessions(t, newDSN) })
	t.Run("Messages", func(t *testing.T) { testMessages(t, newDSN) })
	t.Run("Notes", func(t *testing.T) { testNotes(t, newDSN) })
	t.Run("Scoping", func(t *testing.T) { testScoping(t, newDSN) })
	t.Run("Uploads", func(t *testing.T) { testUploads(t, newDSN) })
}

func testOpen(t *testing.T, newDSN func(tb testing.TB) string) {
	t.Run("Dialect", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock())
		if got := db.Dialect(); got != "sqlite" && got != "postgres" {
			t.Fatalf("Dialect() = %q", got)
		}
		if db.SQL() == nil {
			t.Fatal("SQL() = nil")
		}
	})
	t.Run("ErrMemory", func(t *testing.T) {
		_, err := sqlstore.Open(context.Background(), ":memory:", nil)
		wantCode(t, err, "invalid_request")
	})
}

func testMigrate(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	t.Run("TwiceNoop", func(t *testing.T) {
		db := MustOpen(t, newDSN(t), newClock()) // migrated once
		u := MustCreateUser(t, db, "a")
		for range 2 {
			if err := db.Migrate(ctx); err != nil {
				t.Fatalf("Migrate again: %v", err)
			}
		}
		if got := rawCount(t, db, `SELECT COUNT(*) FROM schema_migrations`); got != migrationCount(t, db) {
			t.Fatalf("schema_migrations rows = %d, want %d", got, migrationCount(t, db))
		}
		if _, err := db.FindUserByID(ctx, u.ID); err != nil {
			t.Fatalf("data lost by a second Migrate: %v", err)
		}
	})
	t.Run("Concurrent", func(t *testing.T) {
		// Four handles on one database stand for four processes starting
		// at once.
		dsn := newDSN(t)
		dbs := make([]*sqlstore.DB, 4)
		for i := range dbs {
			db, err := sqlstore.Open(ctx, dsn, newClock())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			dbs[i] = db
		}
		var wg sync.WaitGroup
		errs := make([]error, len(dbs))
		for i, db := range dbs {
			wg.Go(func() { errs[i] = db.Migrate(ctx) })
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Errorf("Migrate #%d: %v", i, err)
			}
		}
		if got := rawCount(t, dbs[0], `SELECT COUNT(*) FROM schema_migrations`); got != migrationCount(t, dbs[0]) {
			t.Fatalf("schema_migrations rows = %d, want %d", got, migrationCount(t, dbs[0]))
		}
	})
}
