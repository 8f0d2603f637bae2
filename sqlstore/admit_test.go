package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

func mustSession(tb testing.TB, db *sqlstore.DB, u *coachd.User) *coachd.Session {
	tb.Helper()
	s := &coachd.Session{UserID: u.ID, Agent: "coach"}
	if err := db.CreateSession(context.Background(), s); err != nil {
		tb.Fatal(err)
	}
	return s
}

// budgetSession opens a fresh database of b on a fake clock, with a user
// of the given budget and a session of theirs: how most tests of a turn's
// writes begin.
func budgetSession(t *testing.T, b backend, budget int64) (*sqlstore.DB, *fakeClock, *coachd.User, *coachd.Session) {
	t.Helper()
	clock := newClock()
	db := MustOpen(t, b.newDSN(t), clock)
	u := budgetUser(t, db, budget)
	return db, clock, u, mustSession(t, db, u)
}

func admission(s *coachd.Session, owner string, until time.Time, est int64) coachd.TurnAdmission {
	return coachd.TurnAdmission{Owner: owner, Until: until, Seen: s,
		Reserve: coachd.ReserveRequest{Agent: s.Agent, Estimate: est}}
}

// TestAdmitTurn: the lease and the reservation are taken together or not
// at all — a busy session, a budget too small and a session changed since
// it was read each leave both untouched — and only for the user's own
// session.
func TestAdmitTurn(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			u := budgetUser(t, db, 1000)
			other := budgetUser(t, db, 1000)
			s := mustSession(t, db, u)
			until := clock.Now().Add(time.Minute)

			a := admission(s, "A", until, 300)
			a.Stream = &coachd.StreamStart{Owner: "proc_a", Keep: 20}
			adm, err := db.AdmitTurn(ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			res := adm.Reservation
			if tl, err := db.LatestTurn(ctx, u.ID, s.ID); err != nil || adm.StreamTurn != 1 || tl.Turn != 1 || tl.Owner != "proc_a" || tl.Ended {
				t.Fatalf("event log turn %d, latest %+v, %v", adm.StreamTurn, tl, err)
			}
			if res.SessionID != s.ID || res.UserID != u.ID || res.Held != 300 || res.State != coachd.ReservationActive || res.Remaining != 700 {
				t.Fatalf("reservation %+v", res)
			}
			mustStatus(t, db, u.ID, 0, 300)
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", until); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Fatalf("admitted turn's lease not held: %v", err)
			}

			// Busy: another owner's live lease; nothing reserved.
			if _, err := db.AdmitTurn(ctx, admission(s, "B", until, 100)); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Fatalf("busy session: %v", err)
			}
			mustStatus(t, db, u.ID, 0, 300)
			// Another user's session is not found, whatever they claim to have read.
			if _, err := db.AdmitTurn(ctx, coachd.TurnAdmission{Owner: "C", Until: until,
				Seen: &coachd.Session{ID: s.ID, UserID: other.ID}}); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("another user's session: %v", err)
			}

			// EndTurn settles and releases together.
			reply := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("done")}}
			res, _, err = db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Messages: []*coachd.Message{reply},
				ReservationID: res.ID, Spend: coachd.Spend{Amount: 120, Tokens: 120}, Mode: coachd.SettleFinalize, Owner: "A"})
			if err != nil {
				t.Fatal(err)
			}
			if reply.Seq != 1 || reply.SessionID != s.ID || reply.ID == "" {
				t.Fatalf("the stored reply was not filled in: %+v", reply)
			}
			if msgs, err := db.History(ctx, u.ID, s.ID); err != nil || len(msgs) != 1 || msgs[0].Content != "done" {
				t.Fatalf("history %v (%v)", msgs, err)
			}
			if res.State != coachd.ReservationFinalized || res.Charged != 120 || res.Held != 0 || res.Remaining != 880 {
				t.Fatalf("settled %+v", res)
			}
			mustStatus(t, db, u.ID, 120, 0)

			// Too little budget: EBUDGET, and neither the lease nor the
			// event log's turn was taken.
			s, _ = db.FindSession(ctx, u.ID, s.ID)
			a = admission(s, "D", until, 5000)
			a.Stream = &coachd.StreamStart{Owner: "proc_a", Keep: 20}
			if _, err := db.AdmitTurn(ctx, a); coachd.ErrorCode(err) != coachd.EBUDGET {
				t.Fatalf("over budget: %v", err)
			}
			mustStatus(t, db, u.ID, 120, 0)
			if tl, err := db.LatestTurn(ctx, u.ID, s.ID); err != nil || tl.Turn != 1 {
				t.Fatalf("a refused admission began the log's turn %d (%v)", tl.Turn, err)
			}

			// Changed since read: a message stored meanwhile.
			stale := *s
			msg := &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}
			if err := db.AppendMessages(ctx, u.ID, s.ID, []*coachd.Message{msg}); err != nil {
				t.Fatal(err)
			}
			if _, err := db.AdmitTurn(ctx, admission(&stale, "E", until, 10)); !errors.Is(err, coachd.ErrSessionChanged) {
				t.Fatalf("stale read admitted: %v", err)
			}
			mustStatus(t, db, u.ID, 120, 0)
			// Nothing of D's or E's was taken: a third owner leases it.
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "F", until); err != nil {
				t.Fatalf("a refused admission kept the lease: %v", err)
			}
			MustLedgerOK(t, db)
		})
	}
}

// TestEndTurnAllOrNothing: a settlement that fails (no such reservation)
// releases nothing; without a reservation EndTurn only releases.
func TestEndTurnAllOrNothing(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			until := clock.Now().Add(time.Minute)
			if _, err := db.AdmitTurn(ctx, admission(s, "A", until, 100)); err != nil {
				t.Fatal(err)
			}
			missing := coachd.NewID(coachd.PrefixReservation, clock.Now())
			reply := &coachd.Message{Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("done")}}
			end := coachd.TurnEnd{SessionID: s.ID, Messages: []*coachd.Message{reply}, ReservationID: missing,
				Mode: coachd.SettleFinalize, Owner: "A"}
			if _, _, err := db.EndTurn(ctx, u.ID, end); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("unknown reservation: %v", err)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", until); coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Fatalf("a failed EndTurn released the lease: %v", err)
			}
			if msgs, err := db.History(ctx, u.ID, s.ID); err != nil || len(msgs) != 0 || reply.Seq != 0 {
				t.Fatalf("a failed EndTurn stored %d messages (%v)", len(msgs), err)
			}
			end = coachd.TurnEnd{SessionID: s.ID, Spend: coachd.Spend{Amount: -1}, Owner: "A"}
			if _, _, err := db.EndTurn(ctx, u.ID, end); coachd.ErrorCode(err) != coachd.EINVALID {
				t.Fatalf("negative spend: %v", err)
			}
			// Another user's session: nothing stored, nothing released.
			other := budgetUser(t, db, 10)
			end = coachd.TurnEnd{SessionID: s.ID, Messages: []*coachd.Message{reply}, Owner: "A"}
			if _, _, err := db.EndTurn(ctx, other.ID, end); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("another user's session: %v", err)
			}
			if r, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, Owner: "A"}); err != nil || r != nil {
				t.Fatalf("release only: %v, %+v", r, err)
			}
			if err := db.AcquireTurn(ctx, u.ID, s.ID, "B", until); err != nil {
				t.Fatalf("after EndTurn: %v", err)
			}
		})
	}
}

// TestAdmitTurnConcurrent: admissions racing on one session admit exactly
// one turn; admissions racing on one budget never hold more than it.
func TestAdmitTurnConcurrent(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			clock := newClock()
			db := MustOpen(t, b.newDSN(t), clock)
			until := clock.Now().Add(time.Minute)
			race := func(n int, admit func(i int) error) (ok int) {
				var mu sync.Mutex
				var wg sync.WaitGroup
				for i := range n {
					wg.Go(func() {
						err := admit(i)
						mu.Lock()
						defer mu.Unlock()
						switch code := coachd.ErrorCode(err); {
						case err == nil:
							ok++
						case code != coachd.ETURNINPROGRESS && code != coachd.EBUDGET:
							t.Errorf("admission %d: %v", i, err)
						}
					})
				}
				wg.Wait()
				return ok
			}
			u := budgetUser(t, db, 1000)
			s := mustSession(t, db, u)
			if ok := race(8, func(i int) error {
				_, err := db.AdmitTurn(ctx, admission(s, fmt.Sprint("owner", i), until, 10))
				return err
			}); ok != 1 {
				t.Fatalf("%d turns admitted on one session", ok)
			}
			mustStatus(t, db, u.ID, 0, 10)

			// 8 sessions, 300 each, 1000 - 10 left: three fit.
			sessions := make([]*coachd.Session, 8)
			for i := range sessions {
				sessions[i] = mustSession(t, db, u)
			}
			if ok := race(8, func(i int) error {
				_, err := db.AdmitTurn(ctx, admission(sessions[i], "A", until, 300))
				return err
			}); ok != 3 {
				t.Fatalf("%d turns of 300 admitted on 990 left", ok)
			}
			mustStatus(t, db, u.ID, 0, 910)
			MustLedgerOK(t, db)
		})
	}
}

// TestReadTurn: the session and its messages after a seq, scoped to the
// user.
func TestReadTurn(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db := MustOpen(t, b.newDSN(t), newClock())
			u := budgetUser(t, db, 1000)
			other := budgetUser(t, db, 1000)
			s := mustSession(t, db, u)
			if got, msgs, err := db.ReadTurn(ctx, u.ID, s.ID, 0); err != nil || got.ID != s.ID || len(msgs) != 0 {
				t.Fatalf("empty session: %+v, %d messages, %v", got, len(msgs), err)
			}
			var batch []*coachd.Message
			for _, text := range []string{"one", "two", "three"} {
				batch = append(batch, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(text)}})
			}
			if err := db.AppendMessages(ctx, u.ID, s.ID, batch); err != nil {
				t.Fatal(err)
			}
			got, msgs, err := db.ReadTurn(ctx, u.ID, s.ID, 1)
			if err != nil || got.MessageCount != 3 || len(msgs) != 2 || msgs[0].Content != "two" || msgs[1].Seq != 3 {
				t.Fatalf("after seq 1: %+v, %v, %v", got, msgs, err)
			}
			if _, _, err := db.ReadTurn(ctx, other.ID, s.ID, 0); coachd.ErrorCode(err) != coachd.ENOTFOUND {
				t.Fatalf("another user's session: %v", err)
			}
		})
	}
}

// TestAdmitTurnBudgetState: an admission releases the user's stale holds
// and starts a new budget period before it holds its estimate, as Reserve
// does, and refuses an estimate the budget cannot cover with what
// remains. On SQLite these are the cases where its one-statement hold
// refuses and the budget state is read.
func TestAdmitTurnBudgetState(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			db.SetBudgetConfig(coachd.BudgetConfig{Period: coachd.PeriodMonthly})
			stale := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: 200}))
			passTime(t, db, clock, coachd.DefaultReservationTTL+time.Second)

			// 200 are held, but past their expiry: released, they do not
			// count against the 700 (which would fit beside them too).
			adm := must[*coachd.Admission](t)(db.AdmitTurn(ctx, admission(s, "A", clock.Now().Add(time.Minute), 700)))
			if adm.Reservation.Remaining != 300 {
				t.Fatalf("remaining %d after a stale hold was released, want 300", adm.Reservation.Remaining)
			}
			mustStatus(t, db, u.ID, 0, 700)
			if r := must[*coachd.Reservation](t)(db.FindReservation(ctx, u.ID, stale.ID)); r.State != coachd.ReservationExpired {
				t.Fatalf("the stale hold is %s, want expired", r.State)
			}
			if _, _, err := db.EndTurn(ctx, u.ID, coachd.TurnEnd{SessionID: s.ID, ReservationID: adm.Reservation.ID,
				Spend: coachd.Spend{Amount: 400, Tokens: 400}, Mode: coachd.SettleFinalize, Owner: "A"}); err != nil {
				t.Fatal(err)
			}
			mustStatus(t, db, u.ID, 400, 0)

			// 600 remain this month, not 700; the next month starts from
			// nothing used (500 would fit in this one too).
			s = must[*coachd.Session](t)(db.FindSession(ctx, u.ID, s.ID))
			if _, err := db.AdmitTurn(ctx, admission(s, "B", clock.Now().Add(time.Minute), 700)); coachd.ErrorCode(err) != coachd.EBUDGET {
				t.Fatalf("700 of 600 remaining admitted: %v", err)
			}
			mustStatus(t, db, u.ID, 400, 0)
			clock.Add(31 * 24 * time.Hour)
			adm = must[*coachd.Admission](t)(db.AdmitTurn(ctx, admission(s, "B", clock.Now().Add(time.Minute), 500)))
			if adm.Reservation.Remaining != 500 || adm.Reservation.PeriodStart.Month() != time.April {
				t.Fatalf("a new period's reservation: %+v", adm.Reservation)
			}
			mustStatus(t, db, u.ID, 0, 500)
			MustLedgerOK(t, db)
		})
	}
}

// TestAdmitTurnUserGone: an admission for a user deleted since the turn
// read its session is ENOTFOUND, with limits to count or without, as the
// user's own read answered before SQLite's admission stopped reading it.
func TestAdmitTurnUserGone(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, s := budgetSession(t, b, 1000)
			if err := db.DeleteUser(ctx, u.ID); err != nil {
				t.Fatal(err)
			}
			for _, limits := range [][]coachd.LimitHit{nil, {{Key: "rate", Window: clock.Now().Truncate(time.Minute), Limit: 5}}} {
				a := admission(s, "A", clock.Now().Add(time.Minute), 100)
				a.Limits = limits
				if _, err := db.AdmitTurn(ctx, a); coachd.ErrorCode(err) != coachd.ENOTFOUND {
					t.Fatalf("limits %v: %v, want ENOTFOUND", limits, err)
				}
			}
		})
	}
}

// Admissions left behind their model request (TurnAdmission.Behind)
// hold the budget as committed ones do: twenty at once, on twenty
// sessions of a user whose budget covers five, admit exactly five, and
// the five holds are what the user has reserved once every commit is
// done. On SQLite each hold is taken in the writer's open transaction,
// before its commit, and the next admission sees it there.
func TestAdmitTurnBehindBudget(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := context.Background()
			db, clock, u, _ := budgetSession(t, b, 500)
			const n, est = 20, 100
			sessions := make([]*coachd.Session, n)
			for i := range sessions {
				sessions[i] = mustSession(t, db, u)
			}
			var wg sync.WaitGroup
			adms := make([]*coachd.Admission, n)
			errs := make([]error, n)
			for i, s := range sessions {
				wg.Go(func() {
					a := admission(s, "A", clock.Now().Add(time.Minute), est)
					a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}
					a.Behind = true
					if adms[i], errs[i] = db.AdmitTurn(ctx, a); errs[i] == nil && adms[i].Commit != nil {
						errs[i] = adms[i].Commit()
					}
				})
			}
			wg.Wait()
			admitted := 0
			for i, err := range errs {
				switch {
				case err == nil:
					admitted++
				case coachd.ErrorCode(err) != coachd.EBUDGET:
					t.Fatalf("admission %d: %v, want success or EBUDGET", i, err)
				}
			}
			if admitted != 5 {
				t.Fatalf("%d admissions of %d tokens each on a budget of 500, want 5", admitted, est)
			}
			st, err := db.BudgetStatus(ctx, u.ID)
			if err != nil {
				t.Fatal(err)
			}
			if st.TokensReserved != 5*est {
				t.Fatalf("%d tokens reserved, want %d", st.TokensReserved, 5*est)
			}
			MustLedgerOK(t, db)
		})
	}
}
