package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestTranscriptIdempotencyKey: a voice client that retries a transcript
// after a network blip, with the same Idempotency-Key, gets the first
// answer again and the line is stored once (and counted once against the
// transcript rate), as record's retries are. The key is the user's own,
// bounded, and another request under it is 409. Every retry was appended
// again.
func TestTranscriptIdempotencyKey(t *testing.T) {
	forEachBackend(t, func(t *testing.T, dsn string) {
		// A turn rate of 2/h: 4 transcripts an hour.
		e := mustVoiceEnvOn(t, dsn, server.Limits{Rate: coachd.RateLimit{N: 2, Per: time.Hour}}, voiceKey)
		ctx := context.Background()
		post := func(key, sessionID, idem, body string) response {
			t.Helper()
			return e.post(key, "/v1/sessions/"+sessionID+"/messages", body, map[string]string{"Idempotency-Key": idem}, nil)
		}
		stored := func(c interface {
			Messages(context.Context, string, coachd.Page) ([]*coachd.Message, string, error)
		}, sessionID string, want int) {
			t.Helper()
			msgs, _, err := c.Messages(ctx, sessionID, coachd.Page{})
			if err != nil || len(msgs) != want {
				t.Fatalf("stored %d messages %v, want %d", len(msgs), err, want)
			}
		}
		sess, err := e.alice.c.CreateSession(ctx, "", "voice")
		if err != nil {
			t.Fatal(err)
		}
		// The coach speaks first: a marker goes before it, once.
		greet := `{"role":"assistant","content":"Hi! Where to tonight?","source":"voice"}`
		first := post(e.alice.key, sess.ID, "line-1", greet)
		if first.status != http.StatusCreated {
			t.Fatalf("first = %d %s", first.status, first.body)
		}
		for i := range 2 {
			again := post(e.alice.key, sess.ID, "line-1", greet)
			if again.status != http.StatusCreated || string(again.body) != string(first.body) {
				t.Fatalf("retry %d = %d %s, want 201 %s", i, again.status, again.body, first.body)
			}
		}
		stored(e.alice.c, sess.ID, 2)

		t.Run("AtOnce", func(t *testing.T) {
			line := `{"role":"user","content":"Downtown, near the arena.","source":"voice"}`
			got := make([]response, 4)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range got {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					got[i] = post(e.alice.key, sess.ID, "line-2", line)
				}()
			}
			close(start)
			wg.Wait()
			var ids []string
			for i, r := range got {
				var m coachd.Message
				if r.status != http.StatusCreated || json.Unmarshal(r.body, &m) != nil {
					t.Fatalf("copy %d sent at once = %d %s", i, r.status, r.body)
				}
				ids = append(ids, m.ID)
			}
			for _, id := range ids[1:] {
				if id != ids[0] {
					t.Fatalf("copies answered with messages %v, want one", ids)
				}
			}
			stored(e.alice.c, sess.ID, 3)
		})
		t.Run("ErrOtherRequest", func(t *testing.T) {
			r := post(e.alice.key, sess.ID, "line-1", `{"role":"user","content":"Something else.","source":"voice"}`)
			if r.status != http.StatusConflict || r.errorCode() != coachd.ECONFLICT {
				t.Fatalf("the key with another transcript = %d %s, want 409", r.status, r.body)
			}
			stored(e.alice.c, sess.ID, 3)
		})
		t.Run("ErrKey", func(t *testing.T) {
			line := `{"role":"user","content":"hi","source":"voice"}`
			for _, k := range []string{strings.Repeat("k", 201), "k\u00e9y"} {
				if r := post(e.alice.key, sess.ID, k, line); r.status != http.StatusBadRequest || r.errorCode() != coachd.EINVALID {
					t.Fatalf("key %.20q = %d %s, want 400", k, r.status, r.body)
				}
			}
			stored(e.alice.c, sess.ID, 3)
		})
		t.Run("OwnUser", func(t *testing.T) {
			bobs, err := e.bob.c.CreateSession(ctx, "", "voice")
			if err != nil {
				t.Fatal(err)
			}
			r := post(e.bob.key, bobs.ID, "line-1", greet)
			var m coachd.Message
			if r.status != http.StatusCreated || json.Unmarshal(r.body, &m) != nil || m.SessionID != bobs.ID {
				t.Fatalf("bob's line under alice's key = %d %s", r.status, r.body)
			}
			stored(e.bob.c, bobs.ID, 2)
		})
		t.Run("RetriesNotCounted", func(t *testing.T) {
			// Alice stored two transcripts of her four; the retries
			// counted nothing.
			for i, k := range []string{"line-3", "line-4"} {
				if r := post(e.alice.key, sess.ID, k, `{"role":"user","content":"more","source":"voice"}`); r.status != http.StatusCreated {
					t.Fatalf("transcript %d = %d %s", i, r.status, r.body)
				}
			}
			if r := post(e.alice.key, sess.ID, "line-5", `{"role":"user","content":"more","source":"voice"}`); r.status != http.StatusTooManyRequests {
				t.Fatalf("fifth transcript = %d %s, want 429", r.status, r.body)
			}
		})
	})
}
