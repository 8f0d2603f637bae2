package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"

	"github.com/coachd/coachd"
)

// AppendOnce is AppendMessages under the user's idempotency key (see
// coachd.MessageService). The key goes in after the messages, so that
// its lock is taken after the session's, as Record takes them: a call
// with the key at the same time waits on the session, then finds the key
// taken and rolls its messages back.
func (db *DB) AppendOnce(ctx context.Context, userID, sessionID string, msgs []*coachd.Message, once coachd.Once) (*coachd.Message, error) {
	if once.Key == "" || len(msgs) == 0 {
		return nil, db.AppendMessages(ctx, userID, sessionID, msgs)
	}
	rows, err := encodeMessages(msgs)
	if err != nil {
		return nil, err
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	ids, first, _, err := insertMessages(ctx, tx, userID, sessionID, msgs, rows, "", false, nil, 0, "")
	if err != nil {
		return nil, err
	}
	last := *msgs[len(msgs)-1]
	assignMessages([]*coachd.Message{&last}, ids[len(ids)-1:], sessionID, first+int64(len(msgs)-1), tx.now)
	resp, err := json.Marshal(&last)
	if err != nil {
		return nil, internal(err, "encode idempotent response")
	}
	res, err := tx.exec(ctx, `INSERT INTO idempotency_keys (user_id, idem_key, request_hash, response, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, idem_key) DO NOTHING`, userID, once.Key, once.Hash, string(resp), tx.time(tx.now))
	if err != nil {
		return nil, dbError(err, "store idempotency key")
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, dbError(err, "store idempotency key")
	} else if n == 0 {
		// Taken since the caller looked: the messages roll back.
		prev, err := findOnce(ctx, tx, userID, once)
		if err == nil && prev == nil {
			err = coachd.Errorf(coachd.EINTERNAL, "idempotency key taken but not found")
		}
		return prev, err
	}
	if err := tx.commit(); err != nil {
		return nil, err
	}
	assignMessages(msgs, ids, sessionID, first, tx.now)
	return nil, nil
}

// FindOnce returns the message AppendOnce kept under the user's key.
func (db *DB) FindOnce(ctx context.Context, userID string, once coachd.Once) (*coachd.Message, error) {
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	return findOnce(ctx, tx, userID, once)
}

func findOnce(ctx context.Context, tx *tx, userID string, once coachd.Once) (*coachd.Message, error) {
	var hash, resp string
	err := tx.queryRow(ctx, `SELECT request_hash, response FROM idempotency_keys WHERE user_id = ? AND idem_key = ?`,
		userID, once.Key).Scan(&hash, &resp)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, dbError(err, "idempotency key")
	case hash != once.Hash:
		return nil, coachd.Errorf(coachd.ECONFLICT, "Idempotency-Key was already used for a different request")
	}
	m := &coachd.Message{}
	if err := json.Unmarshal([]byte(resp), m); err != nil {
		return nil, internal(err, "decode idempotent response")
	}
	return m, nil
}
