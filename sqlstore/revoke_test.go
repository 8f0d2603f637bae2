package sqlstore_test

import (
	"context"
	"testing"
	"time"
)

// Rotating or revoking a user's key (SetUserKey) ends the stream tokens
// minted with the old one: they let an EventSource read the user's live
// turns for ten minutes, and a revoked key's holder kept reading them.
func TestSetUserKeyEndsStreamTokens(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := MustCreateUser(t, db, "a")
			sess := MustCreateSession(t, db, u.ID)
			other := MustCreateUser(t, db, "b")
			otherSess := MustCreateSession(t, db, other.ID)
			for _, tok := range []struct{ user, sess, hash string }{{u.ID, sess.ID, "tok-a"}, {other.ID, otherSess.ID, "tok-b"}} {
				if err := db.CreateStreamToken(ctx, tok.user, tok.sess, tok.hash, clock.Now().Add(10*time.Minute)); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := db.StreamTokenUser(ctx, "tok-a", sess.ID); err != nil {
				t.Fatalf("fresh token: %v", err)
			}
			if err := db.SetUserKey(ctx, u.ID, "revoked-hash"); err != nil {
				t.Fatal(err)
			}
			if got, err := db.StreamTokenUser(ctx, "tok-a", sess.ID); err == nil {
				t.Errorf("stream token of a revoked key still works: user %s", got.ID)
			} else {
				wantCode(t, err, "unauthorized")
			}
			if _, err := db.StreamTokenUser(ctx, "tok-b", otherSess.ID); err != nil {
				t.Errorf("another user's stream token ended too: %v", err)
			}
		})
	}
}
