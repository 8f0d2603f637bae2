package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/coachd/coachd/sqlstore"
)

// errDrift is returned when doctor finds a user whose cached totals differ
// from the ledger.
var errDrift = errors.New("ledger drift found")

func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlagSet("doctor", "Usage: coachd doctor [--db DSN]\n\nChecks, for every user, that tokens_used equals the ledger sum of the current\nbudget period and tokens_reserved equals the ledger's and the active\nreservations' holds. Prints any drift and exits 3 when there is some\n(1: it could not check; 2: a usage error).")
	return withDB(ctx, fs, args, getenv, stdout, stderr, true, func(db *sqlstore.DB, _ string) error {
		drift, err := db.CheckLedger(ctx)
		if err != nil {
			return fmt.Errorf("check ledger: %w", err)
		}
		for _, d := range drift {
			fmt.Fprintf(stdout, "DRIFT %s: tokens_used %d, ledger %d; tokens_reserved %d, ledger %d, active holds %d\n",
				d.UserID, d.TokensUsed, d.LedgerUsed, d.TokensReserved, d.LedgerReserved, d.Held)
		}
		if len(drift) > 0 {
			return fmt.Errorf("%w: %d users", errDrift, len(drift))
		}
		fmt.Fprintln(stdout, "ledger ok: every user's totals equal the ledger")
		return nil
	})
}
