package agent_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestPhotoSessionRequestBytes: the requests a photo session's turns
// send are byte for byte those coachd sent before the work on how a turn
// reads its photos (hashes of the bodies, which are megabytes). The
// session passes both window bounds (20 attachments, 20 MiB) and holds a
// PDF, a text document and images too old to send.
func TestPhotoSessionRequestBytes(t *testing.T) {
	h := harnessOver(t, nil, nil)
	h.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		return anthropictest.Text("Noted.", 4)
	})
	ctx := context.Background()
	sess := &coachd.Session{UserID: h.user.ID, Agent: agent.DefaultAgent().Name, Title: "photos"}
	if err := h.store.CreateSession(ctx, sess); err != nil {
		t.Fatal(err)
	}
	var msgs []*coachd.Message
	add := func(blocks ...coachd.Block) {
		msgs = append(msgs,
			&coachd.Message{Role: coachd.RoleUser, Blocks: append(blocks, coachd.TextBlock("what about this?"))},
			&coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("Looks fine.")}})
	}
	for i := range 18 { // small images: past the count bound
		add(coachd.AttachmentBlock(coachd.MediaPNG, "", []byte("\x89PNG\r\n\x1a\n"+strings.Repeat(string(rune('a'+i)), 1000+i))))
	}
	add(coachd.AttachmentBlock(coachd.MediaPDF, "plan.pdf", []byte("%PDF-1.4\n1 0 obj << /Type /Page >> endobj\n2 0 obj << /Type /Page >> endobj")),
		coachd.AttachmentBlock(coachd.MediaText, "notes.txt", []byte("shift notes: <airport> & \"surge\"\n")))
	for i := range 6 { // 3 MiB photos: past the byte bound
		add(coachd.AttachmentBlock(coachd.MediaJPEG, "", []byte("\xff\xd8\xff"+strings.Repeat(string(rune('A'+i)), 3<<20-i))))
	}
	if err := h.store.AppendMessages(ctx, h.user.ID, sess.ID, msgs); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"and now?", "and later?", "and tonight?"} {
		tr, err := h.runner.Prepare(ctx, agent.TurnRequest{User: h.user, SessionID: sess.ID, Message: text})
		if err != nil {
			t.Fatal(err)
		}
		if res := tr.Run(ctx, &sink{}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	var got []string
	for _, r := range h.fake.Requests() {
		body := bytes.ReplaceAll(r.Raw, []byte(h.user.ID), []byte("usr_x")) // the one part that varies
		got = append(got, fmt.Sprintf("%d %x", len(body), sha256.Sum256(body)))
	}
	want := []string{ // captured at 913a48c
		"12589968 00841e7d1a32804ce46f8c2b317df027a3a0ffaad98b0fc646405ed0d9045b77",
		"12590097 ac9766d3f502aadb73f995fb2f8c5d12178812cc3df68518ea269d071509478f",
		"12590228 a5903ecf6d2ba2d2a1d804f08ec224f38129f3c0a863ed65351780048c1c3411",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("request bodies changed:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
