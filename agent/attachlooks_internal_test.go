package agent

import (
	"bytes"
	"context"
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
	if raceEnabled {
		t.Skip("the race detector adds allocations of its own: the counts would count it")
	}
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

// TestCompactReusesSentHistory: compact, before a turn's first round,
// sized the history again (compacted, then historyTokens of its result),
// though the reservation had just built the same request from the same
// history: two more reads of every photo. With the request's history
// built, its check reads none.
func TestCompactReusesSentHistory(t *testing.T) {
	var msgs []*coachd.Message
	for i := range 6 {
		photo := coachd.AttachmentBlock(coachd.MediaJPEG, "", append([]byte("\xff\xd8\xff"), bytes.Repeat([]byte{byte(i)}, 1<<20)...))
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{photo, coachd.TextBlock("this one?")}},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("noted")}})
	}
	ts, err := NewToolset()
	if err != nil {
		t.Fatal(err)
	}
	tr := &Turn{agent: DefaultAgent(), tools: ts, history: msgs}
	tr.historySent() // the reservation's request
	reads := testing.AllocsPerRun(5, func() { coachd.AttachmentSent(msgs[0].Blocks[0]) })
	if got := testing.AllocsPerRun(5, func() { tr.compact(context.Background()) }); got >= reads {
		t.Errorf("compact: %v allocations; one read of one photo is %v", got, reads)
	}
}
