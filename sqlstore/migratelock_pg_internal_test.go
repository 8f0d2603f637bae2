package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestMigrateLockTimeoutPG: a migration waiting on a lock another session
// holds (a long transaction, a pg_dump, a psql left in BEGIN) waited for
// ever, and serve's start with it, saying nothing (while every query on
// the table queued behind its request). It gives up after
// MigrateLockTimeout, or the URL's own lock_timeout, with an error saying
// what to look for.
func TestMigrateLockTimeoutPG(t *testing.T) {
	for _, tc := range []struct{ name, param, want string }{
		{"Default", "", MigrateLockTimeout.String()},
		{"URLsOwn", "&lock_timeout=300", "300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := pgtest.NewDatabase(t)
			db := openDSN(t, dsn+tc.param)
			admin, err := sql.Open("pgx", dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer admin.Close()
			hold, err := admin.BeginTx(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Rollback()
			if _, err := hold.Exec(`LOCK TABLE schema_migrations IN ACCESS EXCLUSIVE MODE`); err != nil {
				t.Fatal(err)
			}
			// Only a safety net: the migration must give up well before.
			ctx, cancel := context.WithTimeout(t.Context(), MigrateLockTimeout+20*time.Second)
			defer cancel()
			err = db.Migrate(ctx)
			if ctx.Err() != nil {
				t.Fatalf("Migrate waited on the lock until the test's deadline: %v", err)
			}
			var e *coachd.Error
			if !errors.As(err, &e) || e.Code != coachd.ETIMEOUT || !strings.Contains(e.Message, "lock") ||
				!strings.Contains(e.Message, tc.want) || !strings.Contains(e.Message, "pg_stat_activity") {
				t.Fatalf("got %v, want a timeout after %s naming the lock and where to look", err, tc.want)
			}
		})
	}
}
