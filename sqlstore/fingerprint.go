package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/coachd/coachd"
)

// SaveFingerprint implements coachd.FingerprintService: the latest
// session with a fingerprint wins.
func (db *DB) SaveFingerprint(ctx context.Context, userID, fingerprint, sessionID string) error {
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := findSession(ctx, tx, userID, sessionID); err != nil {
		return err
	}
	if _, err := tx.exec(ctx, `INSERT INTO chat_fingerprints (user_id, fingerprint, session_id, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_id, fingerprint) DO UPDATE SET session_id = excluded.session_id, created_at = excluded.created_at`,
		userID, fingerprint, sessionID, tx.time(tx.now)); err != nil {
		return dbError(err, "save fingerprint")
	}
	return tx.commit()
}

// FindFingerprint implements coachd.FingerprintService.
func (db *DB) FindFingerprint(ctx context.Context, userID, fingerprint string) (string, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Rollback()
	var id string
	err = tx.queryRow(ctx, `SELECT session_id FROM chat_fingerprints WHERE user_id = ? AND fingerprint = ?`, userID, fingerprint).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", coachd.Errorf(coachd.ENOTFOUND, "no session with this conversation")
	}
	return id, dbError(err, "find fingerprint")
}
