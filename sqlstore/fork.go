package sqlstore

import (
	"context"

	"github.com/coachd/coachd"
)

// ForkSession implements coachd.SessionService: in one transaction, a
// new active session of the same agent, title and mode, holding copies
// of the first n messages of the user's session id. The copies get new
// IDs and no usage: the originals' usage was charged already. They are
// what a turn reads at that point (forkMessagesSQL): attachments older
// than the ones a turn may send are copied without their data, which no
// turn of the fork sends, rather than stored twice (the original keeps
// them whole).
func (db *DB) ForkSession(ctx context.Context, userID, id string, n int64) (*coachd.Session, error) {
	var out *coachd.Session
	err := userTx(ctx, db, userID, func(tx *tx) error {
		src, err := findSession(ctx, tx, userID, id)
		if err != nil {
			return err
		}
		if n < 0 || n > src.MessageCount {
			return coachd.Invalid(coachd.FieldError{Field: "messages", Message: "must be within the session's messages", Code: "range"})
		}
		var copies []*coachd.Message
		if n > 0 {
			msgs, err := queryAll(ctx, tx, "list messages", scanMessage, forkMessagesSQL[tx.d], id, n, id, 0, n)
			if err != nil {
				return err
			}
			for _, m := range msgs {
				copies = append(copies, &coachd.Message{Role: m.Role, Content: m.Content, Blocks: m.Blocks, Metadata: m.Metadata, Partial: m.Partial})
			}
		}
		s := &coachd.Session{UserID: userID, Agent: src.Agent, Title: src.Title, Mode: src.Mode, Status: coachd.SessionActive}
		if err := db.createSession(ctx, tx, s, nil); err != nil {
			return err
		}
		if len(copies) > 0 {
			rows, err := encodeMessages(copies)
			if err != nil {
				return err
			}
			if _, _, _, err := insertMessages(ctx, tx, userID, s.ID, copies, rows, "", false, nil, 0, ""); err != nil {
				return err
			}
			s.MessageCount = int64(len(copies))
		}
		out = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
