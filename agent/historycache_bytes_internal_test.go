package agent

import (
	"encoding/base64"
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
