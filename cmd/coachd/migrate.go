package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

func runMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("migrate", "Usage: coachd migrate [--db DSN] [--share-db]\n\nApplies the database migrations that have not run yet. Running it twice does nothing the second time.")
	dsn := dbFlag(fs, getenv)
	env := &envDefaults{getenv: getenv}
	share := shareDBFlag(fs, env)
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if err := env.check(); err != nil {
		fmt.Fprintf(stderr, "coachd migrate: %v\n", err)
		return errUsage
	}
	db, names, err := openMigrated(ctx, *dsn, *share)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, n := range names {
		fmt.Fprintf(stdout, "applied %s\n", n)
	}
	switch len(names) {
	case 0:
		fmt.Fprintf(stdout, "migrated %s (%s): up to date\n", maskDSN(*dsn), db.Dialect())
	case 1:
		fmt.Fprintf(stdout, "migrated %s (%s): 1 migration applied\n", maskDSN(*dsn), db.Dialect())
	default:
		fmt.Fprintf(stdout, "migrated %s (%s): %d migrations applied\n", maskDSN(*dsn), db.Dialect(), len(names))
	}
	return nil
}

// withDB parses a database command's flags (adding --db to fs), opens the
// database and runs fn with it. migrate migrates it; any other command
// (existing) opens it with openCurrentDB, which refuses a SQLite file that
// does not exist rather than create an empty database and report on it.
func withDB(ctx context.Context, fs *flag.FlagSet, args []string, getenv func(string) string, stdout, stderr io.Writer,
	existing bool, fn func(db *sqlstore.DB, dsn string) error) error {
	dsn := dbFlag(fs, getenv)
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	open := openDB
	if existing {
		open = func(ctx context.Context, dsn string) (*sqlstore.DB, error) { return openCurrentDB(ctx, dsn, false) }
	}
	db, err := open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db, *dsn)
}

// openCurrentDB opens the database for a command that is not the server
// nor coachd migrate, and does not migrate it: run from a newer coachd
// (a new image's shell, an operator's laptop) against the database the
// running replicas use, it would change the schema under them (whose
// /readyz then fails). It refuses a schema not this binary's, saying what
// to run. A SQLite file that does not exist yet, or has no tables yet, is
// made and migrated when create is set (a first install: nothing runs on
// it), refused otherwise.
func openCurrentDB(ctx context.Context, dsn string, create bool) (*sqlstore.DB, error) {
	if err := sqlstore.CheckDSN(dsn); err != nil {
		return nil, fmt.Errorf("open database %s: %w", maskDSN(dsn), err)
	}
	if !strings.Contains(dsn, "://") {
		if _, err := os.Stat(dsn); err != nil {
			if create && errors.Is(err, os.ErrNotExist) {
				return openDB(ctx, dsn)
			}
			if dir := filepath.Dir(dsn); !isDir(dir) {
				return nil, fmt.Errorf("database %s: directory %s does not exist (create it, or fix --db)", maskDSN(dsn), maskDSN(dir))
			}
			return nil, fmt.Errorf("database %s does not exist (coachd serve or coachd migrate creates it)", maskDSN(dsn))
		}
	}
	db, err := sqlstore.Open(ctx, dsn, coachd.SystemClock{})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", maskDSN(dsn), err)
	}
	err = db.CheckMigrations(ctx)
	if err != nil && create && db.Dialect() == "sqlite" {
		if blank, berr := db.Blank(ctx); berr == nil && blank {
			// A file another process made a moment ago (serve, just
			// started on it) and has not migrated yet is as new as one
			// that does not exist: migrated here, in turn with that
			// process's migration.
			db.Close()
			return openDB(ctx, dsn)
		}
	}
	if err != nil {
		foreign, ferr := db.Foreign(ctx)
		db.Close()
		if ferr == nil && foreign {
			return nil, fmt.Errorf("database %s is not a coachd database (it has tables but no coachd schema_migrations): check --db", maskDSN(dsn))
		}
		return nil, fmt.Errorf("database %s is not at this coachd's schema (%s): run coachd migrate (or, for a newer schema, a newer coachd)",
			maskDSN(dsn), coachd.ErrorMessage(err))
	}
	return db, nil
}

// isDir reports whether path is a directory.
func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// openDB opens and migrates the database.
func openDB(ctx context.Context, dsn string) (*sqlstore.DB, error) {
	db, _, err := openMigrated(ctx, dsn, false)
	return db, err
}

// shareDBFlag adds --share-db, for serve and migrate.
func shareDBFlag(fs *flag.FlagSet, env *envDefaults) *bool {
	return fs.Bool("share-db", env.Bool("COACHD_SHARE_DB"),
		"install coachd's tables in a database that already holds another application's, which is refused otherwise (env COACHD_SHARE_DB=1)")
}

// openMigrated is openDB, returning the names of the migrations applied.
// A database holding another application's tables is refused unless
// share is set (--share-db).
func openMigrated(ctx context.Context, dsn string, share bool) (*sqlstore.DB, []string, error) {
	db, err := sqlstore.Open(ctx, dsn, coachd.SystemClock{})
	if err != nil {
		return nil, nil, fmt.Errorf("open database %s: %w", maskDSN(dsn), err)
	}
	if share {
		db.ShareDatabase()
	}
	names, err := db.MigrateApplied(ctx)
	if errors.Is(err, sqlstore.ErrForeignTool) {
		db.Close()
		return nil, nil, fmt.Errorf("database %s is not a coachd database (%s): check --db; coachd cannot share it "+
			"(on PostgreSQL, give coachd a schema of its own: CREATE SCHEMA coachd and ?search_path=coachd in the URL)",
			maskDSN(dsn), coachd.ErrorMessage(err))
	}
	if errors.Is(err, sqlstore.ErrForeign) {
		db.Close()
		return nil, nil, fmt.Errorf("database %s is not a coachd database (%s): check --db; to install coachd's tables beside "+
			"the other application's, run coachd migrate --share-db once (on PostgreSQL, better: CREATE SCHEMA coachd and ?search_path=coachd in the URL)",
			maskDSN(dsn), coachd.ErrorMessage(err))
	}
	if err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("migrate %s: %w", maskDSN(dsn), err)
	}
	return db, names, nil
}
