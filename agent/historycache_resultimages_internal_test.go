package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
)

// TestHistoryCacheOmitsOldResultImages: a turn sends at most the newest
// coachd.MaxHistoryAttachments images, screenshots in recorded tool
// results counted too (limitAttachments), but the cache left out the data
// of old top-level attachments only: a session of 30 recorded screenshots
// was cached whole, growing with each one until it was too big to cache
// and every turn read it all from the store. The cache keeps no data of
// those the window cannot send, and the history is the same.
func TestHistoryCacheOmitsOldResultImages(t *testing.T) {
	const screens, size = 30, 1 << 20
	c := newHistoryCache()
	var msgs []*coachd.Message
	for i := range screens {
		shot := coachd.AttachmentBlock(coachd.MediaPNG, "", append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{byte(i)}, size)...))
		content, err := json.Marshal([]coachd.Block{coachd.TextBlock(fmt.Sprintf("screen %d", i)), shot})
		if err != nil {
			t.Fatal(err)
		}
		id := fmt.Sprintf("toolu_%02d", i)
		msgs = append(msgs,
			&coachd.Message{Seq: int64(4*i + 1), Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("and now?")}},
			&coachd.Message{Seq: int64(4*i + 2), Role: coachd.RoleAssistant, Blocks: []coachd.Block{{Type: coachd.BlockToolUse, ID: id, Name: "screenshot", Input: json.RawMessage(`{}`)}}},
			&coachd.Message{Seq: int64(4*i + 3), Role: coachd.RoleUser, Blocks: []coachd.Block{{Type: coachd.BlockToolResult, ToolUseID: id, Content: content}}},
			&coachd.Message{Seq: int64(4*i + 4), Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("seen")}})
	}
	want, _ := json.Marshal(History(msgs, nil))
	c.put("usr_1", "sess_1", msgs, nil)
	cached, _ := c.get("usr_1", "sess_1")
	if len(cached) != len(msgs) {
		t.Fatalf("%d messages cached, want %d", len(cached), len(msgs))
	}
	t.Logf("%d screenshots of %d KiB: the cache holds %.1f MB of %.1f MB", screens, size>>10, float64(c.bytes)/1e6, float64(messagesSize(msgs))/1e6)
	if max := MaxHistoryAttachmentBytes + 2<<20; c.bytes > max {
		t.Errorf("the cache holds %d MiB for the session, want at most %d MiB", c.bytes>>20, max>>20)
	}
	if got, _ := json.Marshal(History(cached, nil)); !bytes.Equal(got, want) {
		t.Error("the cached session's history differs from the stored one's")
	}
	// Compaction's estimate of the history is the same too: it decides
	// when the history is summarized, which changes what is sent.
	if got, want := historyTokens(cached), historyTokens(msgs); got != want {
		t.Errorf("historyTokens of the cached session: %d, of the stored one %d", got, want)
	}
	if !bytes.Contains(msgs[2].Blocks[0].Content, []byte(`"base64"`)) {
		t.Error("the cache changed the caller's message")
	}
}
