package sqlstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore"
)

// TestSecurityDSNPasswordWithAt: a generated password may hold '@',
// which net/url and pgx read (the user info ends at the last '@'). A
// --db URL that pgx then could not parse (a wrong sslmode, port or
// timeout) was quoted in serve's, migrate's and doctor's error with the
// password masked only up to its first '@': the rest of it showed.
func TestSecurityDSNPasswordWithAt(t *testing.T) {
	const tail = "s3cret-tail"
	for _, dsn := range []string{
		"postgres://app:pw@" + tail + "@127.0.0.1:1/app?sslmode=bogus",
		"postgres://app:pw@" + tail + "@127.0.0.1:1/app?connect_timeout=soon",
		"postgres://app:pw@" + tail + "@127.0.0.1:port/app",
		"postgresql://app:pw@" + tail + ":x@[::1/app",
	} {
		db, err := sqlstore.Open(context.Background(), dsn, nil)
		if err == nil {
			db.Close()
			t.Fatalf("Open(%q) opened", dsn)
		}
		if strings.Contains(err.Error(), tail) {
			t.Errorf("Open(%q): %v shows the password", dsn, err)
		}
	}
}
