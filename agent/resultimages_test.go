package agent_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// TestHistoryLimitsToolResultImages: an image inside a tool result (an
// app's tool returning a screenshot, recorded with POST /v1/chat/record)
// goes back to the API on every later turn as a user's photo does, but
// the window counted only the photos of user messages: 25 screenshots
// were all re-sent, past the API's 20 images (beyond which it takes
// none larger than 2000 px) and growing without bound. They count in the
// window, with the user's photos, the oldest omitted first.
func TestHistoryLimitsToolResultImages(t *testing.T) {
	img := coachd.AttachmentBlock(coachd.MediaPNG, "", []byte("\x89PNG\r\n\x1a\nscreen"))
	var msgs []*coachd.Message
	for i := range 25 {
		id := fmt.Sprintf("toolu_%02d", i)
		content, err := json.Marshal([]coachd.Block{coachd.TextBlock(fmt.Sprintf("screen %d", i)), img})
		if err != nil {
			t.Fatal(err)
		}
		user := []coachd.Block{coachd.TextBlock("and now?")}
		if i == 24 {
			user = append([]coachd.Block{img}, user...) // a user's photo: the newest attachment
		}
		msgs = append(msgs,
			&coachd.Message{Role: coachd.RoleUser, Blocks: user},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: id, Name: "screenshot", Input: json.RawMessage(`{}`)}}},
			&coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{{Type: coachd.BlockToolResult, ToolUseID: id, Content: content}}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("seen")}})
	}
	h := agent.History(msgs, nil)
	var sent []string // which screens' images were sent, oldest first
	notes, photo := 0, false
	for _, m := range h {
		for _, b := range m.Blocks {
			switch b.Type {
			case coachd.BlockImage:
				photo = true
			case coachd.BlockToolResult:
				var inner []coachd.Block
				if err := json.Unmarshal(b.Content, &inner); err != nil {
					t.Fatalf("tool result content %s: %v", b.Content, err)
				}
				for _, c := range inner {
					switch {
					case c.Type == coachd.BlockImage:
						sent = append(sent, inner[0].Text)
					case c.Type == coachd.BlockText && strings.Contains(c.Text, "image attachment"):
						notes++
					}
				}
			}
		}
	}
	// 26 images: the 21st drops the window to its newest 10, so screens
	// 11 to 24 and the photo are sent.
	if !photo || len(sent) != 14 || notes != 11 || sent[0] != "screen 11" || sent[13] != "screen 24" {
		t.Fatalf("sent the photo: %v; screens %v and %d notes, want screens 11 to 24 and 11 notes", photo, sent, notes)
	}
	if !strings.Contains(string(msgs[2].Blocks[0].Content), `"image"`) {
		t.Fatal("History changed a stored message")
	}
}
