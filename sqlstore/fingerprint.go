package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coachd/coachd"
)

// SaveFingerprint implements coachd.FingerprintService: the latest
// session with a fingerprint wins, and a fingerprint saved with two
// sessions stays shared.
func (db *DB) SaveFingerprint(ctx context.Context, userID, fingerprint, sessionID string, messages int64) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	s, err := findSession(ctx, tx, userID, sessionID)
	if err != nil {
		return err
	}
	if messages < 0 {
		messages = s.MessageCount
	}
	if _, err := tx.exec(ctx, `INSERT INTO chat_fingerprints (user_id, fingerprint, session_id, created_at, message_count) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, fingerprint) DO UPDATE SET session_id = excluded.session_id, created_at = excluded.created_at,
		message_count = excluded.message_count,
		shared = (chat_fingerprints.shared OR chat_fingerprints.session_id <> excluded.session_id)`,
		userID, fingerprint, sessionID, tx.time(tx.now), messages); err != nil {
		return dbError(err, "save fingerprint")
	}
	return tx.commit()
}

// FindFingerprint implements coachd.FingerprintService.
func (db *DB) FindFingerprint(ctx context.Context, userID, fingerprint string) (string, int64, bool, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return "", 0, false, err
	}
	defer tx.Rollback()
	var id string
	var n sql.NullInt64
	var shared bool
	err = tx.queryRow(ctx, `SELECT session_id, message_count, shared FROM chat_fingerprints WHERE user_id = ? AND fingerprint = ?`,
		userID, fingerprint).Scan(&id, &n, &shared)
	if errors.Is(err, sql.ErrNoRows) {
		return "", 0, false, coachd.Errorf(coachd.ENOTFOUND, "no session with this conversation")
	}
	if !n.Valid {
		n.Int64 = -1
	}
	return id, n.Int64, shared, dbError(err, "find fingerprint")
}
