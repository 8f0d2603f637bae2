package sqlstore

import (
	"context"
	"math"
	"slices"
	"strconv"

	"github.com/coachd/coachd"
)

// listMessagesBefore is ListMessages with page.Before: the page of
// messages just before the cursor (coachd.BeforeEnd: the session's last
// page), in seq order, and the cursor of the page before it ("" when none
// is left). A page is bounded as one after a cursor is: Limit messages,
// maxPageBytes of them, and at least one.
func (db *DB) listMessagesBefore(ctx context.Context, userID, sessionID string, page coachd.Page) ([]*coachd.Message, string, error) {
	if page.Cursor != "" {
		return nil, "", coachd.Errorf(coachd.EINVALID, "before: not with cursor")
	}
	before := int64(math.MaxInt64)
	if page.Before != coachd.BeforeEnd {
		seq, err := decodeSeqCursor(page.Before)
		if err != nil {
			return nil, "", err
		}
		before = seq
	}
	limit := pageLimit(page)
	tx, err := db.beginRead(ctx)
	if err != nil {
		return nil, "", err
	}
	defer tx.Rollback()
	// Newest first, one more than the page: it says an earlier page is left.
	msgs, full, err := queryMessages(ctx, tx, userID, sessionID, maxPageBytes, `SELECT `+columnsFor(page)+` FROM messages m
		JOIN sessions s ON s.id = m.session_id
		WHERE m.session_id = ? AND s.user_id = ? AND m.seq < ? ORDER BY m.seq DESC LIMIT ?`,
		sessionID, userID, before, limit+1)
	if err != nil {
		return nil, "", err
	}
	if len(msgs) == 0 {
		return msgs, "", tx.commit()
	}
	// A page cut short by its bytes may have more before it too.
	more := full || len(msgs) > limit
	msgs = msgs[:min(len(msgs), limit)]
	slices.Reverse(msgs)
	prev := ""
	if more {
		prev = strconv.FormatInt(msgs[0].Seq, 10)
	}
	return msgs, prev, tx.commit()
}
