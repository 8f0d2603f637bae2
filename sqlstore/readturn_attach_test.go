package sqlstore_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestReadTurnOmitsOldAttachments: a turn re-sends at most the newest
// coachd.MaxHistoryAttachments attachments of its session; ReadTurn reads
// the older ones without their data (media type and sizes kept, so the
// turn's note for them is the same), while the message list a client
// reads keeps every byte. The newest message is stored by the admission,
// the one-statement path on Postgres.
func TestReadTurnOmitsOldAttachments(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1_000_000)
			photo := func(i int) coachd.Block {
				return coachd.AttachmentBlock(coachd.MediaPNG, "", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{byte(i)}, 3000)...))
			}
			const older = 5
			for i := range coachd.MaxHistoryAttachments + older - 1 {
				if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{
					{Role: coachd.RoleUser, Blocks: []coachd.Block{photo(i), coachd.TextBlock(fmt.Sprintf("day %d", i))}},
					{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}},
				}); err != nil {
					t.Fatal(err)
				}
			}
			s, err := db.FindSession(ctx, u.ID, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			a := admission(s, "A", clock.Now().Add(time.Minute), 100)
			a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{photo(99), coachd.TextBlock("today")}}
			if _, err := db.AdmitTurn(ctx, a); err != nil {
				t.Fatal(err)
			}
			_, msgs, err := db.ReadTurn(ctx, u.ID, s.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			full, err := db.History(ctx, u.ID, s.ID)
			if err != nil || len(full) != len(msgs) {
				t.Fatalf("History: %d messages, %v; ReadTurn %d", len(full), err, len(msgs))
			}
			omitted := 0
			for i, m := range msgs {
				for j, b := range m.Blocks {
					whole := full[i].Blocks[j]
					if !bytes.Equal(b.Source, whole.Source) {
						if !coachd.AttachmentOmitted(b) {
							t.Fatalf("message %d block %d: source %.80s", m.Seq, j, b.Source)
						}
						omitted++
						gt, gn, _ := coachd.AttachmentInfo(b)
						wt, wn, _ := coachd.AttachmentInfo(whole)
						if gt != wt || gn != wn {
							t.Fatalf("omitted attachment is %s %d bytes, want %s %d", gt, gn, wt, wn)
						}
					}
					if coachd.AttachmentOmitted(whole) {
						t.Fatalf("History read message %d without its attachment", m.Seq)
					}
				}
			}
			if omitted != older {
				t.Fatalf("ReadTurn left out the data of %d attachments, want the %d oldest", omitted, older)
			}
			if coachd.AttachmentOmitted(msgs[len(msgs)-1].Blocks[0]) {
				t.Fatal("the newest attachment was read without its data")
			}
			// A read of what came after a seq: the newest, whole.
			if _, tail, err := db.ReadTurn(ctx, u.ID, s.ID, msgs[len(msgs)-2].Seq); err != nil || len(tail) != 1 || coachd.AttachmentOmitted(tail[0].Blocks[0]) {
				t.Fatalf("ReadTurn after: %d messages, %v", len(tail), err)
			}
		})
	}
}

// TestReadTurnReadsNoMoreThanTheWindow: a turn re-sends at most
// MaxHistoryAttachmentBytes of attachments (20 MiB of base64: five
// full-size photos), but ReadTurn read the data of the newest
// MaxHistoryAttachments messages with attachments: a photo a day at the
// 3 MiB cap made every turn read 20 of them, 80 MB, to send 5. It reads
// the data of the messages the window may send (newer ones holding fewer
// than MaxHistoryAttachments attachments and MaxHistoryAttachmentBytes of
// them, as the history cache keeps them), the rest without.
func TestReadTurnReadsNoMoreThanTheWindow(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, _, u, s := budgetSession(t, b, 1_000_000)
			photo := func(i int) coachd.Block {
				data := bytes.Repeat([]byte{byte(i)}, coachd.MaxAttachmentBytes)
				copy(data, "\x89PNG\r\n\x1a\n")
				return coachd.AttachmentBlock(coachd.MediaPNG, "", data)
			}
			const days = coachd.MaxHistoryAttachments
			for i := range days {
				if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{
					{Role: coachd.RoleUser, Blocks: []coachd.Block{photo(i), coachd.TextBlock(fmt.Sprintf("day %d", i))}},
					{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}},
				}); err != nil {
					t.Fatal(err)
				}
			}
			_, msgs, err := db.ReadTurn(ctx, u.ID, s.ID, 0)
			if err != nil {
				t.Fatal(err)
			}
			read, whole := 0, 0
			for _, m := range msgs {
				read += m.Bytes()
				for _, b := range m.Blocks {
					if _, _, ok := coachd.AttachmentInfo(b); ok && !coachd.AttachmentOmitted(b) {
						whole++
					}
				}
			}
			sent := coachd.AttachmentSentLen(photo(0)) // 4 MiB of base64
			want := coachd.MaxHistoryAttachmentBytes / sent
			t.Logf("ReadTurn of %d days of full-size photos: %.1f MB read, %d photos with their data", days, float64(read)/1e6, whole)
			if whole != want || read > coachd.MaxHistoryAttachmentBytes+1<<20 {
				t.Fatalf("ReadTurn read %d photos with their data (%d bytes); want the %d a turn may send (%d bytes of base64)",
					whole, read, want, coachd.MaxHistoryAttachmentBytes)
			}
			if coachd.AttachmentOmitted(msgs[len(msgs)-2].Blocks[0]) {
				t.Fatal("the newest photo was read without its data")
			}
		})
	}
}
