package agent

import (
	"bytes"
	"testing"

	"github.com/coachd/coachd"
)

// TestPhotoReadOnce: a turn reads a photo's source (megabytes of base64)
// for its type and sizes. historyTokens read each one two or three times
// (sent length, then size, then type again) and limitAttachments twice
// for a photo it notes. A read allocates (its source's head, decoded), so
// their allocations count the reads: at most those of one read a photo,
// plus what the window's bookkeeping and the notes take.
func TestPhotoReadOnce(t *testing.T) {
	var msgs []*coachd.Message
	var blocks []coachd.Block
	for i := range 6 {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte{byte(i)}, 4<<20)...))
		blocks = append(blocks, photo)
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("this one?")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	reads := testing.AllocsPerRun(5, func() {
		for _, b := range blocks {
			coachd.AttachmentSent(b)
		}
	})
	if reads < float64(len(blocks)) {
		t.Fatalf("a read allocates nothing (%v for %d): the allocations count nothing", reads, len(blocks))
	}
	if got := testing.AllocsPerRun(5, func() { historyTokens(msgs) }); got > reads+4 {
		t.Errorf("historyTokens: %v allocations for %d photos, one read of each is %v", got, len(blocks), reads)
	}
	var h []coachd.ModelMessage
	for _, m := range msgs {
		h = append(h, coachd.ModelMessage{Role: m.Role, Blocks: m.Blocks})
	}
	if got := testing.AllocsPerRun(5, func() {
		limitAttachments(append([]coachd.ModelMessage(nil), h...))
	}); got > reads+6*float64(len(blocks)) { // a note allocates its text
		t.Errorf("limitAttachments: %v allocations for %d photos, one read of each is %v", got, len(blocks), reads)
	}
}
