package server_test

import (
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestTranscriptReadsNoHistory proves that a coach transcript on a
// session that already holds a large message (three 3 MiB documents)
// does not read that message to learn whether the session is empty: the
// whole request allocates far less than the message's size.
func TestTranscriptReadsNoHistory(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustVoiceEnvOn(t, dsn, server.Limits{}, voiceKey)
		ctx := context.Background()
		sess, err := e.alice.c.CreateSession(ctx, "", "voice")
		if err != nil {
			t.Fatal(err)
		}
		doc := strings.Repeat("Fares by zone, week 12. ", coachd.MaxAttachmentBytes/24)
		blocks := []coachd.Block{coachd.TextBlock("My fare sheets.")}
		for range 3 {
			blocks = append(blocks, coachd.AttachmentBlock(coachd.MediaText, "fares.txt", []byte(doc)))
		}
		big := &coachd.Message{Role: coachd.RoleUser, Blocks: blocks}
		if err := e.db.AppendMessages(ctx, e.alice.ID, sess.ID, []*coachd.Message{big}); err != nil {
			t.Fatal(err)
		}
		size := 3 * len(doc)
		post := func() response {
			return e.transcript(e.alice.key, sess.ID, `{"role":"assistant","content":"Airport rush after five.","source":"voice"}`)
		}
		post() // warm up the connection and the statement caches
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := post()
		runtime.ReadMemStats(&after)
		if r.status != http.StatusCreated {
			t.Fatalf("transcript = %d %s", r.status, r.body)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > uint64(size/4) {
			t.Fatalf("a transcript allocated %d bytes on a session whose first message is %d bytes: it read the message", got, size)
		}
		// Not the first message: no start marker.
		msgs, _, err := e.alice.c.Messages(ctx, sess.ID, coachd.Page{Limit: 10})
		if err != nil || len(msgs) != 3 || msgs[1].Role != coachd.RoleAssistant || msgs[2].Role != coachd.RoleAssistant {
			t.Fatalf("stored %d messages %v", len(msgs), err)
		}
	})
}
