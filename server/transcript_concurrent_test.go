package server_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestTranscriptsAtOnce proves that transcripts posted at the same time
// on one session (the driver's line and the coach's finish together; a
// second device) are all stored, not refused as a running turn.
func TestTranscriptsAtOnce(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		e := mustVoiceEnvOn(t, dsn, server.Limits{}, voiceKey)
		ctx := context.Background()
		sess, err := e.alice.c.CreateSession(ctx, "", "voice")
		if err != nil {
			t.Fatal(err)
		}
		const n = 8
		got := make([]response, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				got[i] = e.transcript(e.alice.key, sess.ID, fmt.Sprintf(`{"role":"user","content":"line %d","source":"voice"}`, i))
			}()
		}
		close(start)
		wg.Wait()
		for i, r := range got {
			if r.status != http.StatusCreated {
				t.Errorf("transcript %d of %d sent at once = %d %s", i, n, r.status, r.body)
			}
		}
		if msgs, _, err := e.alice.c.Messages(ctx, sess.ID, coachd.Page{}); err != nil || len(msgs) != n {
			t.Fatalf("stored %d messages %v, want %d", len(msgs), err, n)
		}
	})
}
