package agent

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
)

// TestHistoryCacheBoundsBytes: the history cache is bounded by the memory
// it holds, not only by its count of messages. A stored user message
// carries its attachments (up to 10 MiB, as base64), so 100,000 cached
// messages were not the "about 200 MB" they were sized for: a server whose
// users send a photo now and then held every session's photos, gigabytes,
// until it ran out of memory.
func TestHistoryCacheBoundsBytes(t *testing.T) {
	const bound = 256 << 20 // what a server may spend on the cache
	c := newHistoryCache()
	photo := coachd.Block{Type: coachd.BlockImage,
		Source: []byte(`{"type":"base64","media_type":"image/jpeg","data":"` + base64.StdEncoding.EncodeToString(make([]byte, 3<<20)) + `"}`)}
	for i := range 100 { // a hundred users, each with a session of a few photos
		var msgs []*coachd.Message
		for j := range 4 {
			msgs = append(msgs,
				&coachd.Message{Seq: int64(2*j + 1), Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("my lunch")}},
				&coachd.Message{Seq: int64(2*j + 2), Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock(strings.Repeat("Looks good. ", 20))}})
		}
		c.put(fmt.Sprintf("usr_%d", i), fmt.Sprintf("sess_%d", i), msgs, nil)
	}
	held := 0
	for el := c.lru.Front(); el != nil; el = el.Next() {
		for _, m := range el.Value.(*historyEntry).msgs {
			for _, b := range m.Blocks {
				held += len(b.Source) + len(b.Text)
			}
		}
	}
	if held > bound {
		t.Errorf("the history cache holds %d MiB of messages, want at most %d MiB", held>>20, bound>>20)
	}
	// The newest session stays cached.
	if msgs, _ := c.get("usr_99", "sess_99"); len(msgs) != 8 {
		t.Errorf("newest session: %d messages cached, want 8", len(msgs))
	}
}

// TestHistoryCacheOmitsOldAttachments: a turn sends at most the newest
// coachd.MaxHistoryAttachments attachments, so the cache keeps no data of
// older ones, as a turn's read from the store does not (ReadTurn). A
// photo a day for two months was 80 MB of base64 to keep, past what one
// session may hold: the session was not cached at all, and each turn read
// it from the store again.
func TestHistoryCacheOmitsOldAttachments(t *testing.T) {
	c := newHistoryCache()
	var msgs []*coachd.Message
	for j := range 60 {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", []byte(strings.Repeat(string(rune('a'+j%26)), 1<<20)))
		msgs = append(msgs,
			&coachd.Message{Seq: int64(2*j + 1), Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("today's dashboard")}},
			&coachd.Message{Seq: int64(2*j + 2), Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Noted.")}})
	}
	want, _ := json.Marshal(History(msgs, nil))
	c.put("usr_1", "sess_1", msgs, nil)
	cached, _ := c.get("usr_1", "sess_1")
	if len(cached) != len(msgs) {
		t.Fatalf("%d messages cached, want %d", len(cached), len(msgs))
	}
	if max := (coachd.MaxHistoryAttachments + 2) * 4 / 3 << 20; c.bytes > max {
		t.Errorf("the cache holds %d MiB for the session, want at most %d MiB", c.bytes>>20, max>>20)
	}
	if got, _ := json.Marshal(History(cached, nil)); !bytes.Equal(got, want) {
		t.Error("the cached session's history differs from the stored one's")
	}
	if coachd.AttachmentOmitted(msgs[0].Blocks[0]) {
		t.Error("the cache changed the caller's message")
	}
}

// TestHistoryCacheKeepsFullSizePhotos: the window also sends at most
// MaxHistoryAttachmentBytes, five or so full-size (3 MiB) photos. Kept
// whole for the newest 20 messages with attachments, such photos made a
// session of 25 of them 80 MiB to cache, past what one session may
// hold: it was not cached, and each turn read it from the store.
func TestHistoryCacheKeepsFullSizePhotos(t *testing.T) {
	c := newHistoryCache()
	var msgs []*coachd.Message
	for j := range 25 {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", []byte(strings.Repeat(string(rune('a'+j)), 3<<20)))
		msgs = append(msgs,
			&coachd.Message{Seq: int64(2*j + 1), Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("my screen")}},
			&coachd.Message{Seq: int64(2*j + 2), Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Noted.")}})
	}
	want, _ := json.Marshal(History(msgs, nil))
	c.put("usr_1", "sess_1", msgs, nil)
	cached, _ := c.get("usr_1", "sess_1")
	if len(cached) != len(msgs) {
		t.Fatalf("%d messages cached, want %d", len(cached), len(msgs))
	}
	if max := MaxHistoryAttachmentBytes + 5<<20; c.bytes > max {
		t.Errorf("the cache holds %d MiB for the session, want at most %d MiB", c.bytes>>20, max>>20)
	}
	if got, _ := json.Marshal(History(cached, nil)); !bytes.Equal(got, want) {
		t.Error("the cached session's history differs from the stored one's")
	}
}
