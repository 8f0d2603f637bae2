package sqlstore_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/coachd/coachd/sqlstore"
)

// A DSN meant for PostgreSQL in a form coachd does not read (libpq's
// key=value pairs, an upper-case or misspelt scheme) was taken for a
// SQLite file path: coachd created a file named after it in the working
// directory and ran on it, each replica on its own, or failed with an
// error that printed the password. It is refused, without the password.
func TestOpenRefusesOtherDSNs(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, dsn := range []string{
		"host=db user=coachd password=s3cret dbname=coachd",
		"dbname=coachd password=s3cret",
		"POSTGRES://coachd:s3cret@db/coachd",
		"postgre://coachd:s3cret@db/coachd",
		"coachd:s3cret@db:5432/coachd", // no scheme
		"coachd:s3cret@db",
	} {
		db, err := sqlstore.Open(context.Background(), dsn, nil)
		if err == nil {
			db.Close()
		}
		wantCode(t, err, "invalid_request")
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q): %v shows the password", dsn, err)
		}
	}
	if files, _ := os.ReadDir("."); len(files) > 0 {
		t.Errorf("Open created %s", files[0].Name())
	}
	// A SQLite file whose name holds : and @ is written as a path.
	db, err := sqlstore.Open(context.Background(), "./a:b@c.db", nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}
