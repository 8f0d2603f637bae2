package sqlstore_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/coachd/coachd"
)

// TestListMessagesOmitAttachments (both dialects): a listing with
// Page.OmitAttachments reads each attachment without its data, as
// coachd.OmitAttachmentData leaves it, before and after a cursor; the
// words are read as stored, and a listing without it reads the data.
func TestListMessagesOmitAttachments(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := MustCreateUser(t, db, "a")
			s := MustCreateSession(t, db, u.ID)
			photo := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("p"), 64<<10)...)
			msgs := []*coachd.Message{
				{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.AttachmentBlock(coachd.MediaPNG, "", photo), coachd.TextBlock("my route")}},
				{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Looks steady.")}},
			}
			if err := db.AppendMessages(ctx, u.ID, s.ID, msgs); err != nil {
				t.Fatal(err)
			}
			for _, page := range []coachd.Page{{Before: coachd.BeforeEnd, Limit: 24, OmitAttachments: true}, {OmitAttachments: true}} {
				got, _, err := db.ListMessages(ctx, u.ID, s.ID, page)
				if err != nil || len(got) != 2 {
					t.Fatalf("ListMessages(%+v) = %d, %v", page, len(got), err)
				}
				if bl := got[0].Blocks; len(bl) != 2 || !coachd.AttachmentOmitted(bl[0]) || bl[1].Text != "my route" || got[0].Bytes() > 1024 {
					t.Fatalf("ListMessages(%+v) read the photo's message as %d bytes: %+v", page, got[0].Bytes(), bl)
				}
				if got[1].Blocks[0].Text != "Looks steady." {
					t.Fatalf("the reply read as %+v", got[1].Blocks)
				}
			}
			whole, _, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{Before: coachd.BeforeEnd})
			if err != nil || len(whole) != 2 || coachd.AttachmentOmitted(whole[0].Blocks[0]) || whole[0].Bytes() < len(photo) {
				t.Fatalf("a listing without OmitAttachments read %d messages, the first of %d bytes (%v)", len(whole), whole[0].Bytes(), err)
			}
		})
	}
}
