package sqlstore

import (
	"context"
	"time"

	"github.com/coachd/coachd"
)

// AcquireTurn takes the session's turn lease for owner until the given
// time, in one conditional UPDATE: it succeeds only when no other owner
// holds an unexpired lease, so two replicas can never both run a turn on
// one session. A lease left by a crashed process runs out by itself.
func (db *DB) AcquireTurn(ctx context.Context, userID, sessionID, owner string, until time.Time) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE sessions SET turn_owner = ?, turn_until = `+leaseUntil[tx.d]+`
		WHERE id = ? AND user_id = ? AND `+leaseFree[tx.d],
		leaseFreeArgs([]any{owner, leaseArg(tx, until), sessionID, userID}, tx, owner)...)
	if err != nil {
		return dbError(err, "acquire turn")
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbError(err, "acquire turn")
	} else if n == 0 {
		if _, err := findSession(ctx, tx, userID, sessionID); err != nil {
			return err
		}
		return coachd.Errorf(coachd.ETURNINPROGRESS, "a turn is already running on this session")
	}
	return tx.commit()
}

// RenewTurn implements coachd.SessionService: owner's lease, expired or
// not, is extended while no other owner took it. AcquireTurn would take
// it back from a session another owner took and released since (its
// turn_owner NULL), and the turn that had stalled past its lease would
// then write into it (fenceLease).
func (db *DB) RenewTurn(ctx context.Context, userID, sessionID, owner string, until time.Time) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE sessions SET turn_until = `+leaseUntil[tx.d]+`
		WHERE id = ? AND user_id = ? AND turn_owner = ?`, leaseArg(tx, until), sessionID, userID, owner)
	if err != nil {
		return dbError(err, "renew turn")
	}
	if n, err := res.RowsAffected(); err != nil {
		return dbError(err, "renew turn")
	} else if n == 0 {
		if _, err := findSession(ctx, tx, userID, sessionID); err != nil {
			return err
		}
		return coachd.Errorf(coachd.ETURNINPROGRESS, "the turn's lease was taken by another turn")
	}
	return tx.commit()
}

// The lease's SQL by dialect: what turn_until is set to (leaseArg is its
// argument), and the conditions that the session's turn is free for an
// owner (leaseFreeArgs adds theirs) and that its lease ran out. On
// SQLite the time is the process's (one machine, one clock); on Postgres
// it is the database's, the one clock replicas share: with each
// replica's own, a replica whose clock ran ahead of the lease owner's
// (skew, or a jump) found a live lease run out and ran a second turn on
// the session.
var (
	leaseUntil = [...]string{dialectSQLite: `?`, dialectPostgres: `clock_timestamp() + ?::bigint * interval '1 microsecond'`}
	leaseFree  = [...]string{
		dialectSQLite:   `(turn_owner IS NULL OR turn_owner = ? OR turn_until <= ?)`,
		dialectPostgres: `(turn_owner IS NULL OR turn_owner = ? OR turn_until <= clock_timestamp())`,
	}
	leaseOver = [...]string{dialectSQLite: `turn_until <= ?`, dialectPostgres: `turn_until <= clock_timestamp()`}
)

// A reservation's hold is timed as a lease is, for the same reason: a
// replica ahead of the one that reserved released a live hold, and the
// user's next turn spent the tokens the first was spending. Its expiry
// is written as leaseUntil (leaseArg) and RETURNed on Postgres, and it
// ran out when holdOver (leaseOverArgs). A charge moves it on to
// holdExtend (its argument: the TTL in microseconds, or NULL to keep it).
var (
	holdOver   = [...]string{dialectSQLite: `expires_at <= ?`, dialectPostgres: `expires_at <= clock_timestamp()`}
	holdExtend = [...]string{dialectSQLite: `?`, dialectPostgres: `GREATEST(expires_at, clock_timestamp() + ?::bigint * interval '1 microsecond')`}
)

// leaseArg is leaseUntil's argument for a lease until until: on Postgres
// its length from now (until and tx.now are both this process's time).
func leaseArg(tx *tx, until time.Time) any {
	if tx.d == dialectPostgres {
		return until.Sub(tx.now).Microseconds()
	}
	return tx.time(storeTime(until))
}

// leaseFreeArgs appends leaseFree's arguments for owner to args.
func leaseFreeArgs(args []any, tx *tx, owner string) []any {
	args = append(args, owner)
	return leaseOverArgs(args, tx)
}

// leaseOverArgs appends leaseOver's arguments to args.
func leaseOverArgs(args []any, tx *tx) []any {
	if tx.d == dialectPostgres {
		return args
	}
	return append(args, tx.time(tx.now))
}

// ReleaseTurn gives up owner's lease; another owner's lease is left alone.
func (db *DB) ReleaseTurn(ctx context.Context, userID, sessionID, owner string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := releaseTurn(ctx, tx, userID, sessionID, owner); err != nil {
		return err
	}
	return tx.commit()
}

func releaseTurn(ctx context.Context, tx *tx, userID, sessionID, owner string) error {
	if _, err := tx.exec(ctx, `UPDATE sessions SET turn_owner = NULL, turn_until = NULL
		WHERE id = ? AND user_id = ? AND turn_owner = ?`, sessionID, userID, owner); err != nil {
		return dbError(err, "release turn")
	}
	return nil
}

// ExpireSessions marks agent's active sessions idle for longer than idle
// as expired (seed 002's auto-expiry): no message, no update and no turn
// running since. It returns how many it expired.
func (db *DB) ExpireSessions(ctx context.Context, agent string, idle time.Duration) (int, error) {
	if idle <= 0 {
		return 0, nil
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	res, err := tx.exec(ctx, `UPDATE sessions SET status = 'expired', updated_at = ?
		WHERE agent = ? AND status = 'active' AND updated_at < ? AND (turn_owner IS NULL OR `+leaseOver[tx.d]+`)`,
		leaseOverArgs([]any{tx.time(tx.now), agent, tx.time(storeTime(tx.now.Add(-idle)))}, tx)...)
	if err != nil {
		return 0, dbError(err, "expire sessions")
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, dbError(err, "expire sessions")
	}
	return int(n), tx.commit()
}
