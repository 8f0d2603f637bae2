package sqlstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestReadTurnOldRowsWithoutLite: a message stored before content_lite
// (migration 0018), or a tool result's screenshots stored before the
// column held them (it was NULL for a message without top-level
// attachments), has no content_lite. The turn's read took content_json
// for every such row, and its window did not count them: a session of 30
// screenshots of 512 KiB stored so read all 30, 21 MB, on every read
// where the window sends 20. A read fills in what those rows lack, so
// the reads after it take the window's alone; the history sent is the
// same as from every byte, each time.
func TestReadTurnOldRowsWithoutLite(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, _, u, s := budgetSession(t, b, 1_000_000)
			screenshotRounds(t, db, u.ID, s.ID, 30, 1, 512<<10)
			// As they were stored before: no content_lite.
			if _, err := db.SQL().ExecContext(ctx, rebind(b.name, `UPDATE messages SET content_lite = NULL WHERE session_id = $1`), s.ID); err != nil {
				t.Fatal(err)
			}
			full, err := db.History(ctx, u.ID, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(agent.History(full, nil))
			for read := 1; read <= 3; read++ {
				_, msgs, err := db.ReadTurn(ctx, u.ID, s.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				whole := 0
				for _, m := range msgs {
					if bytes.Contains(m.Blocks[0].Content, []byte(`"base64"`)) {
						whole++
					}
				}
				if got, _ := json.Marshal(agent.History(msgs, nil)); !bytes.Equal(got, want) {
					t.Fatalf("read %d: the history sent differs from the one sent from every byte", read)
				}
				if read > 1 && whole != coachd.MaxHistoryAttachments {
					t.Fatalf("read %d took %d rounds' screenshots with their data; want the %d a turn may send", read, whole, coachd.MaxHistoryAttachments)
				}
			}
			// The message list a client reads keeps every screenshot.
			if full, err = db.History(ctx, u.ID, s.ID); err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(agent.History(full, nil)); !bytes.Equal(got, want) {
				t.Fatal("the stored messages changed")
			}
		})
	}
}
