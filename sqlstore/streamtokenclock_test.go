package sqlstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestStreamTokenClockPG: on Postgres a stream token's lifetime is timed
// by the database's clock, as a turn's lease is, so a token lives its
// TTL on every replica. Its expiry was written by the minting replica's
// clock and judged by the reading one's: a replica 10 minutes behind
// took a token that had expired a minute before (its holder, whose
// credentials were to end with it, read on), and one 10 minutes ahead
// refused a token minted a moment before.
func TestStreamTokenClockPG(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.NewDatabase(t)
	a := MustOpen(t, dsn, skewedClock(0))
	behind, ahead := MustOpen(t, dsn, skewedClock(-10*time.Minute)), MustOpen(t, dsn, skewedClock(10*time.Minute))
	u := MustCreateUser(t, a, "alice")
	s := MustCreateSession(t, a, u.ID)
	const ttl = 5 * time.Minute

	t.Run("Live", func(t *testing.T) {
		if err := a.CreateStreamToken(ctx, u.ID, s.ID, "live", time.Now().Add(ttl)); err != nil {
			t.Fatal(err)
		}
		if got, err := ahead.StreamTokenUser(ctx, "live", s.ID); err != nil || got.ID != u.ID {
			t.Fatalf("a replica 10 min ahead refused a token minted now: %v", err)
		}
		if _, err := ahead.PruneEvents(ctx, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
		if kept, err := a.StreamTokenKept(ctx, "live", s.ID); err != nil || !kept {
			t.Fatalf("a replica 10 min ahead pruned a live token (%v)", err)
		}
	})
	t.Run("Expired", func(t *testing.T) {
		if err := a.CreateStreamToken(ctx, u.ID, s.ID, "old", time.Now().Add(ttl)); err != nil {
			t.Fatal(err)
		}
		// Its TTL ran out a minute ago.
		if err := rawExec(t, a, `UPDATE stream_tokens SET expires_at = expires_at - interval '6 minutes' WHERE token_hash = 'old'`); err != nil {
			t.Fatal(err)
		}
		if _, err := a.StreamTokenUser(ctx, "old", s.ID); coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
			t.Fatalf("the minting replica took an expired token: %v", err)
		}
		if _, err := behind.StreamTokenUser(ctx, "old", s.ID); coachd.ErrorCode(err) != coachd.EUNAUTHORIZED {
			t.Fatalf("a replica 10 min behind took a token expired a minute ago: %v", err)
		}
	})
}
