package datasource_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/datasource"
)

// TestDSNPasswordWithAt: a generated password may hold '@', which
// net/url and pgx read (the user info ends at the last '@'). A DSN that
// pgx then could not parse (a wrong sslmode, port or timeout) was quoted
// with the password masked only up to its first '@': the rest of it was
// in the pack problem serve logs. Masked or refused, none of it shows.
func TestDSNPasswordWithAt(t *testing.T) {
	const tail = "s3cret-tail"
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "data"), 0o755)
	os.WriteFile(filepath.Join(dir, "data", "app.yaml"), []byte("dsn: ${APP_DB}\ntables:\n  events: {scope: user_id, columns: [id]}\n"), 0o644)
	for _, db := range []string{
		"postgres://app:pw@" + tail + "@127.0.0.1:1/app?sslmode=bogus",
		"postgres://app:pw@" + tail + "@127.0.0.1:1/app?connect_timeout=soon",
		"postgres://app:pw@" + tail + "@127.0.0.1:port/app",
		"postgres://app:pw@" + tail + ":x@[::1/app",
	} {
		_, err := datasource.Load(context.Background(), dir, []string{"data/app.yaml"}, func(string) string { return db }, nil)
		if err == nil || strings.Contains(err.Error(), tail) || !strings.Contains(err.Error(), "data/app.yaml:1: dsn: ") {
			t.Errorf("%s: %v", db, err)
		}
	}
}
