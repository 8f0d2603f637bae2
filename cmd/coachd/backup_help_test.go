package main

import (
	"context"
	"strings"
	"testing"
)

// TestBackupHelpOffersNoPostgres: coachd backup -h described --db as
// "SQLite file, or a postgres:// URL to use PostgreSQL", the text every
// database command shares, though backup refuses a PostgreSQL URL (its
// own summary sends PostgreSQL to pg_dump). Its --db is a SQLite file.
func TestBackupHelpOffersNoPostgres(t *testing.T) {
	var out syncBuffer
	if err := run(context.Background(), []string{"coachd", "backup", "-h"}, getenvFrom(nil), &out, &out); err != nil {
		t.Fatal(err)
	}
	_, flags, _ := strings.Cut(out.String(), "Flags:")
	if strings.Contains(flags, "postgres://") || !strings.Contains(flags, "SQLite") {
		t.Errorf("backup's flags offer what it refuses:\n%s", flags)
	}
}
