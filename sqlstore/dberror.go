package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/coachd/coachd"
)

// internal wraps a driver error as EINTERNAL with context, or as
// EUNAVAILABLE when the server is not there or ended the connection
// (serverGone: Postgres restarting, failing over), or is read-only for
// now (a failover under way): nothing was done, and the same request may
// succeed in a moment. A connection Postgres refused (refusal:
// credentials, a missing database) is EINTERNAL saying what to fix.
func internal(err error, format string, args ...any) error {
	if serverGone(err) || readOnlyServer(err) {
		return &coachd.Error{Code: coachd.EUNAVAILABLE, Message: "the database is unavailable for now: retry in a moment",
			Retryable: true, RetryAfter: time.Second, Err: fmt.Errorf(format+": %w", append(args, err)...)}
	}
	e := coachd.Errorf(coachd.EINTERNAL, format, args...)
	if why := refusal(err); why != "" {
		// Not EUNAVAILABLE: retrying will not fix credentials, and the
		// operator reads what to fix first.
		e.Message += ": " + why
	} else if storageFailed(err) {
		// What an operator must act on, said in the log's first words.
		e.Message += ": the database's storage is full or failing (free disk space, check the disk)"
	}
	e.Err = err
	return e
}

// dbError maps a database error to a domain error: domain errors pass
// through, no rows is ENOTFOUND, unique violations ECONFLICT, CHECK, NOT
// NULL and foreign-key violations EINVALID, anything else EINTERNAL. what
// says what was being done, for the message.
func dbError(err error, what string, args ...any) error {
	if err == nil {
		return nil
	}
	var ce *coachd.Error
	if errors.As(err, &ce) {
		return err
	}
	msg := fmt.Sprintf(what, args...)
	var e *coachd.Error
	switch {
	case errors.Is(err, sql.ErrNoRows):
		e = coachd.Errorf(coachd.ENOTFOUND, "%s: not found", msg)
	default:
		switch violation(err) {
		case violationUnique:
			e = coachd.Errorf(coachd.ECONFLICT, "%s: already exists", msg)
		case violationCheck, violationNotNull:
			e = coachd.Errorf(coachd.EINVALID, "%s: value not allowed", msg)
		case violationText:
			e = coachd.Errorf(coachd.EINVALID, "%s: text must be valid UTF-8 without NUL characters", msg)
		case violationForeignKey:
			e = coachd.Errorf(coachd.EINVALID, "%s: refers to a missing row", msg)
		default:
			return internal(err, "%s", msg)
		}
	}
	e.Err = err
	return e
}

// commitError maps a COMMIT's failure. A connection lost during it
// leaves unknown whether the server committed: that is never
// EUNAVAILABLE, whose request may simply be sent again.
func commitError(err error) error {
	if serverGone(err) {
		e := coachd.Errorf(coachd.EINTERNAL, "commit: the connection was lost; whether it committed is unknown")
		e.Err = err
		return e
	}
	return dbError(err, "commit")
}
