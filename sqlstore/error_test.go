package sqlstore

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestDBError checks the mapping of real driver errors of both dialects to
// domain codes.
func TestDBError(t *testing.T) {
	for name, dsn := range map[string]func(t *testing.T) string{
		"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "x.db") },
		"postgres": func(t *testing.T) string { return pgtest.NewDatabase(t) },
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db, err := Open(ctx, dsn(t), coachd.SystemClock{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			now := db.dialect.timeArg(time.Now())
			exec := func(q string, args ...any) error {
				_, err := db.write.ExecContext(ctx, db.dialect.rebind(q), args...)
				return err
			}
			if err := exec(`INSERT INTO users (id, api_key_hash, created_at, updated_at) VALUES ('u1', 'h', ?, ?)`, now, now); err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				name string
				err  error
				want string
			}{
				{"Unique", exec(`INSERT INTO users (id, api_key_hash, created_at, updated_at) VALUES ('u2', 'h', ?, ?)`, now, now), coachd.ECONFLICT},
				{"PrimaryKey", exec(`INSERT INTO users (id, api_key_hash, created_at, updated_at) VALUES ('u1', 'h2', ?, ?)`, now, now), coachd.ECONFLICT},
				{"Check", exec(`INSERT INTO sessions (id, user_id, status, created_at, updated_at) VALUES ('s1', 'u1', 'bogus', ?, ?)`, now, now), coachd.EINVALID},
				{"ForeignKey", exec(`INSERT INTO sessions (id, user_id, created_at, updated_at) VALUES ('s2', 'nobody', ?, ?)`, now, now), coachd.EINVALID},
				{"NotNull", exec(`INSERT INTO users (id, api_key_hash, created_at, updated_at) VALUES ('u3', NULL, ?, ?)`, now, now), coachd.EINVALID},
				{"NoRows", db.write.QueryRowContext(ctx, `SELECT id FROM users WHERE id = 'zzz'`).Scan(new(string)), coachd.ENOTFOUND},
				{"Other", exec(`SELECT * FROM no_such_table`), coachd.EINTERNAL},
			} {
				if tc.err == nil {
					t.Errorf("%s: statement succeeded", tc.name)
					continue
				}
				got := dbError(tc.err, "op")
				if coachd.ErrorCode(got) != tc.want {
					t.Errorf("%s: %v mapped to %q, want %q", tc.name, tc.err, coachd.ErrorCode(got), tc.want)
				}
				if tc.name != "NoRows" && coachd.AsError(got).Err != tc.err {
					t.Errorf("%s: cause not kept", tc.name)
				}
			}
			if got := dbError(sql.ErrNoRows, "x"); coachd.AsError(got).Err != sql.ErrNoRows {
				t.Errorf("no rows cause not kept")
			}
		})
	}
}

// TestInvalidTextPG: a string Postgres cannot hold as text (invalid UTF-8,
// as an Idempotency-Key header may carry: HTTP allows such bytes in a
// header value) is the caller's bad input, EINVALID, not an internal error
// logged as the server's.
func TestInvalidTextPG(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, pgtest.NewDatabase(t), coachd.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &coachd.User{Name: "a", TokenBudget: 1000}
	if err := db.CreateUser(ctx, u, "h"); err != nil {
		t.Fatal(err)
	}
	s := &coachd.Session{UserID: u.ID}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	r, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Estimate: 100})
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: s.ID, ReservationID: r.ID, TokensUsed: 10, Final: true,
		IdempotencyKey: "key-\xff", RequestHash: "h"})
	if coachd.ErrorCode(err) != coachd.EINVALID {
		t.Fatalf("record with a key of invalid UTF-8: %v, want %s", err, coachd.EINVALID)
	}
	if _, err := db.FindFile(ctx, u.ID, "doc", "a\x00b"); coachd.ErrorCode(err) != coachd.EINVALID {
		t.Fatalf("find a file by a name with NUL: %v, want %s", err, coachd.EINVALID)
	}
}
