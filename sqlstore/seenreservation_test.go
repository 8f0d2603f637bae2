package sqlstore_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestEndTurnReservationSeen: a settlement given the reservation as the
// caller saw it (TurnEnd.ReservationSeen) ends exactly as one without it,
// whatever it was given: the current reservation, one a charge or the
// sweeper has since moved on, one with a field forged, another user's,
// one with nothing left to change (a frozen clock, the same spend). Two
// users play the same turns in lockstep, one with a seen reservation and
// one without; after every settlement their reservations, totals and
// ledgers match, and the caller's copy is never written. The current
// reservation saves the settlement its read: one statement fewer (counted
// here on SQLite; on Postgres TestPostgresRoundTrips counts the round
// trips).
func TestEndTurnReservationSeen(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: time.Minute})
			rng := rand.New(rand.NewPCG(7, uint64(len(b.name))))
			seenUser, plainUser := budgetUser(t, db, 1_000_000), budgetUser(t, db, 1_000_000)
			seenSess, plainSess := mustSession(t, db, seenUser), mustSession(t, db, plainUser)
			saved := 0
			for trial := range 60 {
				est := int64(50 + rng.IntN(450))
				admit := func(s *coachd.Session) *coachd.Reservation {
					t.Helper()
					s, err := db.FindSession(ctx, s.UserID, s.ID)
					if err != nil {
						t.Fatal(err)
					}
					adm, err := db.AdmitTurn(ctx, admission(s, "A", clock.Now().Add(time.Hour), est))
					if err != nil {
						t.Fatal(err)
					}
					return adm.Reservation
				}
				cur, other := admit(seenSess), admit(plainSess)
				seenBefore := []*coachd.Reservation{clone(cur)}
				spend := int64(0)
				steps := 1 + rng.IntN(4)
				for step := range steps + 1 {
					mode := coachd.SettleCharge
					if step == steps {
						mode = []coachd.SettleMode{coachd.SettleFinalize, coachd.SettleAbort}[rng.IntN(2)]
					}
					if rng.IntN(3) > 0 {
						clock.Add(time.Second) // otherwise frozen: a charge may change nothing
					}
					if rng.IntN(8) == 0 { // both holds lapse, the sweeper expires them
						for _, id := range []string{cur.ID, other.ID} {
							if err := rawExec(t, db, `UPDATE reservations SET expires_at = ? WHERE id = ?`,
								rawTime(db, clock.Now().Add(-time.Second)), id); err != nil {
								t.Fatal(err)
							}
						}
						if _, err := db.ExpireReservations(ctx); err != nil {
							t.Fatal(err)
						}
					}
					if rng.IntN(4) > 0 {
						spend += int64(rng.IntN(int(est/2) + 1))
					}
					seen, kind := pickSeen(rng, cur, other, seenBefore)
					given := clone(seen)
					end := func(u *coachd.User, s *coachd.Session, id string, seen *coachd.Reservation) (*coachd.Reservation, int64) {
						t.Helper()
						before := db.WriteStats()
						// With a message, as a round's write: on Postgres
						// the settlement then goes in its statement.
						msg := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("step")}}
						r, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: id, ReservationSeen: seen,
							Spend: coachd.Spend{Amount: spend, Tokens: spend}, Mode: mode, Messages: []*coachd.Message{msg}})
						if err != nil {
							t.Fatalf("trial %d step %d (%s seen): %v", trial, step, kind, err)
						}
						return r, db.WriteStats().Statements - before.Statements
					}
					got, withSeen := end(seenUser, seenSess, cur.ID, seen)
					want, without := end(plainUser, plainSess, other.ID, nil)
					if !sameSettlement(got, want, b.name) {
						t.Fatalf("trial %d step %d (%s seen, mode %v): settled %+v, without a seen reservation %+v", trial, step, kind, mode, got, want)
					}
					if seen != nil && *seen != *given {
						t.Fatalf("trial %d step %d: the seen reservation was written: %+v, given %+v", trial, step, seen, given)
					}
					if b.name == "sqlite" && kind == "current" && cur.State == coachd.ReservationActive && got.ExpiresAt.After(cur.ExpiresAt) {
						// A charge that moved the hold's expiry wrote the
						// reservation: without its read.
						if withSeen != without-1 {
							t.Fatalf("trial %d step %d: %d statements with the current reservation seen, %d without", trial, step, withSeen, without)
						}
						saved++
					}
					seenBefore = append(seenBefore, clone(got))
					cur, other = got, want
				}
				if _, _, err := db.EndTurn(ctx, seenUser.ID, coachd.TurnEnd{SessionID: seenSess.ID, Owner: "A"}); err != nil {
					t.Fatal(err)
				}
				if _, _, err := db.EndTurn(ctx, plainUser.ID, coachd.TurnEnd{SessionID: plainSess.ID, Owner: "A"}); err != nil {
					t.Fatal(err)
				}
			}
			sameAccounts(t, db, seenUser.ID, plainUser.ID)
			MustLedgerOK(t, db)
			if b.name == "sqlite" && saved == 0 {
				t.Fatal("no settlement was made from the current reservation")
			}
		})
	}
}

func clone(r *coachd.Reservation) *coachd.Reservation {
	if r == nil {
		return nil
	}
	c := *r
	return &c
}

// pickSeen gives a settlement the reservation as seen: current, an
// earlier state of it, a forged copy, another user's, or none.
func pickSeen(rng *rand.Rand, cur, other *coachd.Reservation, before []*coachd.Reservation) (*coachd.Reservation, string) {
	switch rng.IntN(8) {
	case 0:
		return clone(before[rng.IntN(len(before))]), "earlier"
	case 1:
		f := clone(cur)
		switch rng.IntN(4) {
		case 0:
			f.Held++
		case 1:
			f.Estimate *= 2
		case 2:
			f.State = coachd.ReservationActive
			f.ExpiresAt = f.ExpiresAt.Add(time.Hour)
		case 3:
			f.FreePreview = !f.FreePreview
		}
		return f, "forged"
	case 2:
		return clone(other), "another user's"
	case 3:
		return nil, "no"
	}
	return clone(cur), "current"
}

// sameSettlement compares what two users' settlements left, but for
// what is each user's own (IDs, the user). On Postgres a hold's expiry
// is by the database's clock (TestHoldClockPG), read when each statement
// ran: the two are a moment apart.
func sameSettlement(a, b *coachd.Reservation, dialect string) bool {
	slack := time.Duration(0)
	if dialect == "postgres" {
		slack = time.Second
	}
	return a.Estimate == b.Estimate && a.Held == b.Held && a.Charged == b.Charged && a.State == b.State &&
		a.FreePreview == b.FreePreview && a.ExpiresAt.Sub(b.ExpiresAt).Abs() <= slack && a.Remaining == b.Remaining && a.ChargedRaw == b.ChargedRaw
}

// sameAccounts compares two users' totals and ledgers, entry by entry.
func sameAccounts(t *testing.T, db *sqlstore.DB, a, b string) {
	t.Helper()
	ctx := context.Background()
	sa, err := db.BudgetStatus(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := db.BudgetStatus(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if sa.TokensUsed != sb.TokensUsed || sa.TokensReserved != sb.TokensReserved || sa.RawTokensUsed != sb.RawTokensUsed {
		t.Fatalf("totals %+v, without seen reservations %+v", sa, sb)
	}
	la, err := db.Ledger(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := db.Ledger(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(la) != len(lb) {
		t.Fatalf("%d ledger entries, without seen reservations %d", len(la), len(lb))
	}
	for i := range la {
		x, y := la[i], lb[i]
		if x.Used != y.Used || x.Reserved != y.Reserved || x.Reason != y.Reason || x.RawTokens != y.RawTokens {
			t.Fatalf("ledger entry %d: %+v, without seen reservations %+v", i, x, y)
		}
	}
}

// TestEndTurnSeenWithoutReservation: a seen reservation given without a
// reservation to settle settles nothing and fails nothing; one given for
// another reservation than ReservationID is not used for it.
func TestEndTurnSeenWithoutReservation(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			adm, err := db.AdmitTurn(ctx, admission(s, "A", clock.Now().Add(time.Minute), 300))
			if err != nil {
				t.Fatal(err)
			}
			blank := clone(adm.Reservation)
			blank.ID = ""
			if r, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationSeen: blank,
				Spend: coachd.Spend{Amount: 50, Tokens: 50}, Mode: coachd.SettleFinalize}); err != nil || r != nil {
				t.Fatalf("settled %+v (%v) without a reservation to settle", r, err)
			}
			mustStatus(t, db, u.ID, 0, 300)
			other := clone(adm.Reservation)
			other.ID, other.Held = "res_other", 0
			r, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
				ReservationSeen: other, Spend: coachd.Spend{Amount: 50, Tokens: 50}, Mode: coachd.SettleFinalize, Owner: "A"})
			if err != nil || r.ID != adm.Reservation.ID || r.Charged != 50 || r.Held != 0 {
				t.Fatalf("settled %+v (%v)", r, err)
			}
			mustStatus(t, db, u.ID, 50, 0)
			MustLedgerOK(t, db)
		})
	}
}
