package agent_test

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// allocated is how many bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestHistoryAttachmentsNotCopied: a session's newest 20 phone photos of
// 700 KB are 19 MB of base64, re-sent every round. Building the round's
// history and its estimate read each photo's size by decoding its source
// whole, a copy of its base64, several times: about 60 MB of garbage per
// round for sizes alone. They read the sizes without copying the data.
func TestHistoryAttachmentsNotCopied(t *testing.T) {
	var msgs []*coachd.Message
	for i := range agent.MaxHistoryAttachments {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", bytes.Repeat([]byte{byte(i)}, 700<<10))
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("today's")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	var h []coachd.ModelMessage
	if n := allocated(func() { h = agent.History(msgs, nil) }); n > 4<<20 {
		t.Errorf("History allocated %d MB for the sizes of %d photos", n>>20, len(msgs)/2)
	}
	if n := allocated(func() { agent.EstimateTokens(&coachd.ModelRequest{Messages: h}) }); n > 4<<20 {
		t.Errorf("EstimateTokens allocated %d MB for the sizes of %d photos", n>>20, len(msgs)/2)
	}
	images := 0
	for _, m := range h {
		for _, b := range m.Blocks {
			if b.Type == coachd.BlockImage {
				images++
			}
		}
	}
	if images != agent.MaxHistoryAttachments {
		t.Fatalf("History sent %d photos, want %d", images, agent.MaxHistoryAttachments)
	}
}
