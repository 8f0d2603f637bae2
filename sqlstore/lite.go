package sqlstore

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

// A message stored before content_lite (migration 0018), or one whose
// tool result holds screenshots stored before coachd.OmitAttachmentData
// looked inside tool results, has none (NULL: "no attachments"). A
// turn's read took such a row's content_json, every byte of its photos,
// on every read, however old, and its window (attachmentSizes) did not
// count it. The read that finds such rows fills in their content_lite,
// derived from content_json as a new row's is (encodeMessage); the
// message itself is not changed, and the reads after it are bounded.

// maxLiteFills bounds how many rows one read fills in, the newest first
// (they are the window's): a long old session is filled over a few
// reads, and no read waits long on the writes.
const maxLiteFills = 200

// turnRow is a message as a turn reads it (turnMessages) and whether its
// row has no content_lite.
type turnRow struct {
	msg    *coachd.Message
	noLite bool
}

func scanTurnMessage(row interface{ Scan(...any) error }) (turnRow, error) {
	var r turnRow
	m, err := scanMessage(flagRow{row, &r.noLite})
	r.msg = m
	return r, err
}

// flagRow scans a row of messageColumns then one flag.
type flagRow struct {
	row  interface{ Scan(...any) error }
	flag *bool
}

func (f flagRow) Scan(dest ...any) error { return f.row.Scan(append(dest, f.flag)...) }

// fillLite stores the content_lite of the rows that lack it and hold
// attachments, read whole from content_json: at most maxLiteFills, the
// newest first. A failure leaves them as they were (the turn goes on;
// the next read tries again), and a row filled meanwhile is left alone.
func (db *DB) fillLite(ctx context.Context, rows []turnRow) {
	var ids, lites []string
	for i := len(rows) - 1; i >= 0 && len(ids) < maxLiteFills; i-- {
		if !rows[i].noLite {
			continue
		}
		lite, ok := coachd.OmitAttachmentData(rows[i].msg.Blocks)
		if !ok {
			continue // no attachments: NULL says so
		}
		b, err := json.Marshal(lite)
		if err != nil {
			continue
		}
		ids, lites = append(ids, rows[i].msg.ID), append(lites, string(b))
	}
	if len(ids) == 0 {
		return
	}
	tx, err := db.beginWrite(ctx)
	if err != nil {
		return
	}
	defer tx.Rollback()
	for i := range ids {
		if _, err := tx.exec(ctx, `UPDATE messages SET content_lite = ? WHERE id = ? AND content_lite IS NULL`, lites[i], ids[i]); err != nil {
			return
		}
	}
	_ = tx.commit()
}
