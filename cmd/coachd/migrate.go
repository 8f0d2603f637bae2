package main

import (
	"context"
	"fmt"
	"io"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", "Usage: coachd migrate [--db DSN]\n\nApplies the database migrations that have not run yet. Running it twice does nothing the second time.")
	dsn := dbFlag(fs, getenv)
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	db, err := openDB(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	fmt.Fprintf(stdout, "migrated %s (%s)\n", maskDSN(*dsn), db.Dialect())
	return nil
}

// openDB opens and migrates the database.
func openDB(ctx context.Context, dsn string) (*sqlstore.DB, error) {
	db, err := sqlstore.Open(ctx, dsn, coachd.SystemClock{})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", maskDSN(dsn), err)
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate %s: %w", maskDSN(dsn), err)
	}
	return db, nil
}
