package sqlstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// screenshotRounds appends n rounds of a tool returning per screenshots
// of size bytes (recorded as an app's own loop stores them: the
// tool_result's content is its text and the images) to the user's
// session.
func screenshotRounds(t *testing.T, db interface {
	AppendMessages(context.Context, string, string, []*coachd.Message) error
}, userID, sessionID string, n, per, size int) {
	t.Helper()
	for i := range n {
		inner := []coachd.Block{coachd.TextBlock(fmt.Sprintf("screen %d", i))}
		for k := range per {
			data := bytes.Repeat([]byte{byte(i), byte(k)}, size/2)
			copy(data, "\x89PNG\r\n\x1a\n")
			inner = append(inner, coachd.AttachmentBlock(coachd.MediaPNG, "", data))
		}
		content, err := json.Marshal(inner)
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("toolu_%02d", i)
		if err := db.AppendMessages(context.Background(), userID, sessionID, []*coachd.Message{
			{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("and now?")}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: id, Name: "screenshot", Input: json.RawMessage(`{}`)}}},
			{Role: coachd.RoleUser, Blocks: []coachd.Block{{Type: coachd.BlockToolResult, ToolUseID: id, Content: content}}},
			{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("seen")}},
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadTurnOmitsOldResultImages: a turn re-sends at most the newest
// coachd.MaxHistoryAttachments images and MaxHistoryAttachmentBytes of
// them, those a tool returned in a recorded tool_result counted too (the
// agent's window notes the rest), but ReadTurn left out the data of old
// top-level attachments only: a session of 30 recorded screenshots read
// all 30, every turn, 21 MB of them at 512 KiB each where the window
// sends 14. It reads the older ones without their data, by either bound,
// and the history the model is sent is the same as from every byte.
func TestReadTurnOmitsOldResultImages(t *testing.T) {
	for _, tc := range []struct {
		name            string
		rounds, per, sz int
		whole           int // rounds read with their data: the window's
	}{
		{"Screenshots", 30, 1, 512 << 10, coachd.MaxHistoryAttachments},
		{"FullSize", 30, 1, 1 << 20, 15},                               // 1.4 MB of base64 each: 20 MiB is 15
		{"TwoEach", 30, 2, 64 << 10, coachd.MaxHistoryAttachments / 2}, // 20 images in 10 rounds
	} {
		for _, b := range backends {
			t.Run(tc.name+"/"+b.name, func(t *testing.T) {
				ctx := context.Background()
				db, _, u, s := budgetSession(t, b, 1_000_000)
				screenshotRounds(t, db, u.ID, s.ID, tc.rounds, tc.per, tc.sz)
				_, msgs, err := db.ReadTurn(ctx, u.ID, s.ID, 0)
				if err != nil {
					t.Fatal(err)
				}
				full, err := db.History(ctx, u.ID, s.ID)
				if err != nil || len(full) != len(msgs) {
					t.Fatalf("History: %d messages, %v; ReadTurn %d", len(full), err, len(msgs))
				}
				read, all, whole := 0, 0, 0
				for i, m := range msgs {
					read, all = read+m.Bytes(), all+full[i].Bytes()
					if bytes.Contains(m.Blocks[0].Content, []byte(`"base64"`)) {
						whole++
					}
				}
				t.Logf("ReadTurn of %d rounds of %d screenshots of %d KiB: %.1f MB read of %.1f MB, %d rounds with their data",
					tc.rounds, tc.per, tc.sz>>10, float64(read)/1e6, float64(all)/1e6, whole)
				if whole != tc.whole {
					t.Errorf("ReadTurn read %d rounds' screenshots with their data (%d bytes); want the %d a turn may send", whole, read, tc.whole)
				}
				if !bytes.Contains(msgs[len(msgs)-2].Blocks[0].Content, []byte(`"base64"`)) {
					t.Error("the newest screenshot was read without its data")
				}
				got, _ := json.Marshal(agent.History(msgs, nil))
				want, _ := json.Marshal(agent.History(full, nil))
				if !bytes.Equal(got, want) {
					t.Error("the history sent from ReadTurn's messages differs from the one sent from every byte")
				}
				// The message list a client reads keeps every screenshot.
				for _, m := range full {
					if m.Blocks[0].Type == coachd.BlockToolResult && bytes.Count(m.Blocks[0].Content, []byte(`"base64"`)) != tc.per {
						t.Fatalf("History read message %d without its screenshots", m.Seq)
					}
				}
			})
		}
	}
}
