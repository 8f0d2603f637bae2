package sqlstore_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestPostgresRefusedNotRetryable: a login Postgres refuses (no such
// role, a wrong password, a role that may not log in: SQLSTATE class 28)
// or a database that does not exist (3D000) read as "the database is
// unavailable for now: retry in a moment", an EUNAVAILABLE a client
// retries for ever and an operator reads as a network blip. Waiting fixes
// neither: the error now says what is wrong, is not retryable, and shows
// no password.
func TestPostgresRefusedNotRetryable(t *testing.T) {
	dsn := pgtest.NewDatabase(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	dbName := strings.TrimPrefix(u.Path, "/")
	role := "r_" + dbName
	const pw = "hunter2-not-shown"
	ctx := context.Background()

	refused := func(t *testing.T, err error, want string) {
		t.Helper()
		var ce *coachd.Error
		if !errors.As(err, &ce) {
			t.Fatalf("error %v is not a *coachd.Error", err)
		}
		if ce.Code == coachd.EUNAVAILABLE || ce.Retryable || ce.RetryAfter != 0 {
			t.Errorf("error %q (code %s, retryable %v): a refusal waiting will not fix", err, ce.Code, ce.Retryable)
		}
		if !strings.Contains(ce.Message, want) {
			t.Errorf("message %q does not say %q", ce.Message, want)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("the password shows in %q", err)
		}
	}
	withUser := func(user string) string {
		v := *u
		v.User = url.UserPassword(user, pw)
		return v.String()
	}

	t.Run("ErrNoRole", func(t *testing.T) {
		_, err := sqlstore.Open(ctx, withUser("nobody_"+dbName), coachd.SystemClock{})
		refused(t, err, "refused coachd's login")
	})
	t.Run("ErrNoDatabase", func(t *testing.T) {
		v := *u
		v.Path = "/missing_" + dbName
		_, err := sqlstore.Open(ctx, v.String(), coachd.SystemClock{})
		refused(t, err, "does not exist")
	})
	t.Run("ErrLoginRevoked", func(t *testing.T) {
		admin, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		for _, q := range []string{
			"CREATE ROLE " + role + " LOGIN",
			"ALTER DATABASE " + dbName + " OWNER TO " + role,
			"GRANT ALL ON SCHEMA public TO " + role,
		} {
			if _, err := admin.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		t.Cleanup(func() {
			admin.ExecContext(ctx, "DROP OWNED BY "+role+" CASCADE")
			admin.ExecContext(ctx, "DROP ROLE IF EXISTS "+role)
		})
		db := MustOpen(t, withUser(role), coachd.SystemClock{})
		MustCreateUser(t, db, "ada")

		// The operator revokes coachd's login and ends its connections.
		for _, q := range []string{
			"ALTER ROLE " + role + " NOLOGIN",
			"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '" + role + "'",
		} {
			if _, err := admin.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		// A call on a connection that was ended may say so (the server
		// went away: retryable); the next connection is refused.
		var last error
		for range 5 {
			_, _, last = db.ListUsers(ctx, coachd.Page{Limit: 10})
			if coachd.ErrorCode(last) != coachd.EUNAVAILABLE {
				break
			}
		}
		refused(t, last, "refused coachd's login")
	})
}
