package sqlstore_test

import (
	"context"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	pgtest.Shutdown()
	os.Exit(code)
}

// backend makes DSNs of fresh, empty databases of one dialect.
type backend struct {
	name   string
	newDSN func(tb testing.TB) string
}

var backends = []backend{
	{"sqlite", func(tb testing.TB) string { return filepath.Join(tb.TempDir(), "coachd.db") }},
	{"postgres", pgtest.NewDatabase},
}

func TestStore(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { runStoreSuite(t, b.newDSN) })
	}
}

// fakeClock is a settable clock; it starts at a fixed instant.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock {
	return &fakeClock{t: time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// MustOpen opens dsn with clock, migrates it and closes it at the end of
// the test.
func MustOpen(tb testing.TB, dsn string, clock coachd.Clock) *sqlstore.DB {
	tb.Helper()
	db, err := sqlstore.Open(context.Background(), dsn, clock)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	if err := db.Migrate(context.Background()); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return db
}

func MustCreateUser(tb testing.TB, db *sqlstore.DB, name string) *coachd.User {
	tb.Helper()
	u := &coachd.User{Name: name, TokenBudget: 1000}
	if err := db.CreateUser(context.Background(), u, "hash-"+name); err != nil {
		tb.Fatalf("CreateUser(%s): %v", name, err)
	}
	return u
}

func MustCreateSession(tb testing.TB, db *sqlstore.DB, userID string) *coachd.Session {
	tb.Helper()
	s := &coachd.Session{UserID: userID, Agent: "coach", Title: "t"}
	if err := db.CreateSession(context.Background(), s); err != nil {
		tb.Fatalf("CreateSession: %v", err)
	}
	return s
}

// wantCode fails the test unless err carries the domain code want.
func wantCode(tb testing.TB, err error, want string) {
	tb.Helper()
	if got := coachd.ErrorCode(err); got != want {
		tb.Fatalf("error code = %q (%v), want %q", got, err, want)
	}
	var ce *coachd.Error
	if !errors.As(err, &ce) {
		tb.Fatalf("error %v is not a *coachd.Error", err)
	}
}

// rawExec runs q on the database directly, with "?" placeholders.
func rawExec(tb testing.TB, db *sqlstore.DB, q string, args ...any) error {
	tb.Helper()
	_, err := db.SQL().ExecContext(context.Background(), db.Rebind(q), args...)
	return err
}

func rawCount(tb testing.TB, db *sqlstore.DB, q string, args ...any) int64 {
	tb.Helper()
	var n int64
	if err := db.SQL().QueryRowContext(context.Background(), db.Rebind(q), args...).Scan(&n); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	return n
}

// rawTime is a timestamp column value in db's dialect.
func rawTime(db *sqlstore.DB, t time.Time) any { return db.TimeArg(t) }

func ptr[T any](v T) *T { return &v }

func encodeB64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
