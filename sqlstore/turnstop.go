package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

// SetTurnStop implements coachd.MessageService. The metadata is merged
// here, not in SQL, so both dialects store it alike.
func (db *DB) SetTurnStop(ctx context.Context, userID, sessionID, messageID, reason string) error {
	if reason == "" || len(reason) > coachd.MaxStopReasonLen {
		return coachd.Invalid(coachd.FieldError{Field: "turn_stop_reason", Message: "must be 1 to 64 bytes", Code: "length"})
	}
	_, err := writeTx(ctx, db, func(tx *tx) (struct{}, error) {
		var raw []byte
		err := tx.queryRow(ctx, `SELECT m.metadata FROM messages m JOIN sessions s ON s.id = m.session_id
			WHERE m.id = ? AND m.session_id = ? AND s.user_id = ? AND m.role = 'assistant'`,
			messageID, sessionID, userID).Scan(&raw)
		if err != nil {
			return struct{}{}, dbError(err, "message %q", messageID)
		}
		meta := map[string]json.RawMessage{}
		if len(raw) > 0 {
			if err := json.Unmarshal(raw, &meta); err != nil || meta == nil {
				meta = map[string]json.RawMessage{} // not an object: replaced
			}
		}
		meta["turn_stop_reason"], _ = json.Marshal(reason)
		out, err := json.Marshal(meta)
		if err != nil {
			return struct{}{}, internal(err, "message %s: encode metadata", messageID)
		}
		if _, err := tx.exec(ctx, `UPDATE messages SET metadata = ? WHERE id = ?`, string(out), messageID); err != nil {
			return struct{}{}, dbError(err, "message %q", messageID)
		}
		return struct{}{}, nil
	})
	return err
}
