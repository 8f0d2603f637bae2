package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

func runBackup(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("backup", "Usage: coachd backup --out FILE [--db FILE]\n\n"+
		"Writes a consistent copy of a SQLite database to FILE, a new file, while coachd\n"+
		"serves it (copying the database file misses what its -wal file holds). To\n"+
		"restore: stop coachd, delete the database's -wal and -shm files, put the copy\n"+
		"in its place. For PostgreSQL use pg_dump.")
	dsn := dbFlag(fs, getenv)
	fs.Lookup("db").Usage = "the SQLite `file` to copy (env COACHD_DB); PostgreSQL is backed up with pg_dump"
	out := fs.String("out", "", "the `file` to write; it must not exist")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if *out == "" {
		fmt.Fprintln(stderr, "coachd backup: --out is required")
		fs.SetOutput(stderr)
		fs.Usage()
		return errUsage
	}
	if strings.Contains(*dsn, "://") {
		return fmt.Errorf("backup copies SQLite databases: back PostgreSQL up with pg_dump")
	}
	if err := sqlstore.CheckDSN(*dsn); err != nil {
		return fmt.Errorf("open database %s: %w", maskDSN(*dsn), err)
	}
	// Not openCurrentDB: a backup is what one takes before migrating, so
	// any schema is copied; but a missing file is not made.
	if _, err := os.Stat(*dsn); err != nil {
		if pe, ok := errors.AsType[*os.PathError](err); ok {
			err = pe.Err // its text quotes the name: a key=value DSN's password
		}
		return fmt.Errorf("database %s: %w", maskDSN(*dsn), err)
	}
	db, err := sqlstore.Open(ctx, *dsn, coachd.SystemClock{})
	if err != nil {
		return fmt.Errorf("open database %s: %w", maskDSN(*dsn), err)
	}
	defer db.Close()
	if err := db.Backup(ctx, *out); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up %s to %s\n", maskDSN(*dsn), *out)
	return nil
}
