package sqlstore_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// migrationCount is the number of embedded migrations of db's dialect.
func migrationCount(tb testing.TB, db *sqlstore.DB) int64 {
	tb.Helper()
	entries, err := os.ReadDir("migrations/" + db.Dialect())
	if err != nil {
		tb.Fatal(err)
	}
	return int64(len(entries))
}

func TestBudget(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { testBudget(t, b.newDSN) })
	}
}

// budgetUser creates a user with the given budget.
func budgetUser(tb testing.TB, db *sqlstore.DB, budget int64) *coachd.User {
	tb.Helper()
	// Names are unique: each budget user gets its own.
	id := coachd.NewID("k", time.Now())
	u := &coachd.User{Name: "b-" + id, TokenBudget: budget}
	if err := db.CreateUser(context.Background(), u, "hash-"+id); err != nil {
		tb.Fatal(err)
	}
	return u
}

// MustLedgerOK fails unless every user's cache equals the ledger.
func MustLedgerOK(tb testing.TB, db *sqlstore.DB) {
	tb.Helper()
	drift, err := db.CheckLedger(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if len(drift) > 0 {
		tb.Fatalf("ledger drift: %+v", drift)
	}
}

func mustStatus(tb testing.TB, db *sqlstore.DB, userID string, used, reserved int64) {
	tb.Helper()
	st, err := db.BudgetStatus(context.Background(), userID)
	if err != nil {
		tb.Fatal(err)
	}
	if st.TokensUsed != used || st.TokensReserved != reserved {
		tb.Fatalf("used, reserved = %d, %d; want %d, %d", st.TokensUsed, st.TokensReserved, used, reserved)
	}
	MustLedgerOK(tb, db)
}

func must[T any](tb testing.TB) func(T, error) T {
	return func(v T, err error) T {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		return v
	}
}

func testBudget(t *testing.T, newDSN func(tb testing.TB) string) {
	ctx := context.Background()
	setup := func(t *testing.T, budget int64) (*sqlstore.DB, *fakeClock, *coachd.User) {
		clock := newClock()
		db := MustOpen(t, newDSN(t), clock)
		db.SetBudgetConfig(coachd.BudgetConfig{})
		return db, clock, budgetUser(t, db, budget)
	}
	reserve := func(t *testing.T, db *sqlstore.DB, u *coachd.User, est int64) *coachd.Reservation {
		t.Helper()
		return must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: est}))
	}
	t.Run("FinalizeCumulative", func(t *testing.T) {
		db, _, u := setup(t, 1000)
		r := reserve(t, db, u, 300)
		if r.Remaining != 700 || r.State != coachd.ReservationActive {
			t.Fatalf("reserve: %+v", r)
		}
		mustStatus(t, db, u.ID, 0, 300)
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 120))
		mustStatus(t, db, u.ID, 120, 0)
		rows := len(must[[]coachd.LedgerEntry](t)(db.Ledger(ctx, u.ID)))
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 120))
		if got := len(must[[]coachd.LedgerEntry](t)(db.Ledger(ctx, u.ID))); got != rows {
			t.Fatalf("repeat finalize wrote %d ledger rows", got-rows)
		}
		r = must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 150))
		if r.Charged != 150 || r.State != coachd.ReservationFinalized {
			t.Fatalf("refinalize: %+v", r)
		}
		mustStatus(t, db, u.ID, 150, 0)
	})
	t.Run("ErrBudget", func(t *testing.T) {
		db, _, u := setup(t, 1000)
		reserve(t, db, u, 800)
		_, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: 300})
		wantCode(t, err, coachd.EBUDGET)
		if e := coachd.AsError(err); e.Extra["remaining"] != int64(200) {
			t.Fatalf("extra = %v", e.Extra)
		}
		mustStatus(t, db, u.ID, 0, 800)
	})
	t.Run("AbortAndCharge", func(t *testing.T) {
		db, _, u := setup(t, 1000)
		r := reserve(t, db, u, 300)
		must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, r.ID, 100))
		mustStatus(t, db, u.ID, 100, 200)
		must[*coachd.Reservation](t)(db.Charge(ctx, u.ID, r.ID, 400)) // over the estimate: nothing left held
		mustStatus(t, db, u.ID, 400, 0)
		r2 := reserve(t, db, u, 300)
		r2 = must[*coachd.Reservation](t)(db.Abort(ctx, u.ID, r2.ID, 50))
		if r2.State != coachd.ReservationAborted {
			t.Fatalf("abort: %+v", r2)
		}
		mustStatus(t, db, u.ID, 450, 0)
	})
	t.Run("ExpireAndLateFinalize", func(t *testing.T) {
		db, clock, u := setup(t, 500)
		r := reserve(t, db, u, 400)
		passTime(t, db, clock, coachd.DefaultReservationTTL+time.Second)
		if n := must[int](t)(db.ExpireReservations(ctx)); n != 1 {
			t.Fatalf("expired %d, want 1", n)
		}
		mustStatus(t, db, u.ID, 0, 0)
		r = must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 200))
		if r.State != coachd.ReservationFinalized || r.Charged != 200 {
			t.Fatalf("late finalize: %+v", r)
		}
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 200))
		mustStatus(t, db, u.ID, 200, 0)
	})
	t.Run("ReserveReleasesStaleHolds", func(t *testing.T) {
		db, clock, u := setup(t, 500)
		reserve(t, db, u, 400)
		passTime(t, db, clock, coachd.DefaultReservationTTL+time.Second)
		reserve(t, db, u, 400)
		mustStatus(t, db, u.ID, 0, 400)
	})
	t.Run("FreePreview", func(t *testing.T) {
		db, _, u := setup(t, 0)
		req := coachd.ReserveRequest{UserID: u.ID, Agent: "coach", Estimate: 100, FreePreviewTurns: 2}
		for i := range 2 {
			r := must[*coachd.Reservation](t)(db.Reserve(ctx, req))
			if !r.FreePreview {
				t.Fatalf("turn %d not free", i)
			}
			must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 90))
		}
		_, err := db.Reserve(ctx, req)
		wantCode(t, err, coachd.EBUDGET)
		req.Agent = "other" // free turns are counted per agent
		if r := must[*coachd.Reservation](t)(db.Reserve(ctx, req)); !r.FreePreview {
			t.Fatal("other agent's turn not free")
		}
		mustStatus(t, db, u.ID, 0, 0)
	})
	t.Run("MonthlyPeriod", func(t *testing.T) {
		db, clock, u := setup(t, 1000)
		db.SetBudgetConfig(coachd.BudgetConfig{Period: coachd.PeriodMonthly})
		old := reserve(t, db, u, 300)
		r := reserve(t, db, u, 600)
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 600))
		mustStatus(t, db, u.ID, 600, 300)
		clock.Add(31 * 24 * time.Hour) // March → April
		st := must[*coachd.BudgetStatus](t)(db.BudgetStatus(ctx, u.ID))
		if st.TokensUsed != 0 || st.PeriodStart.Month() != time.April {
			t.Fatalf("new period: %+v", st)
		}
		// Every read of the user (the admin's views, the CLI's list) shows
		// the new period's usage before any turn rolls the period.
		byID := must[*coachd.User](t)(db.FindUserByID(ctx, u.ID))
		listed, _, err := db.ListUsers(ctx, coachd.Page{})
		if err != nil {
			t.Fatal(err)
		}
		name := "renamed"
		updated := must[*coachd.User](t)(db.UpdateUser(ctx, u.ID, coachd.UserUpdate{Name: &name}))
		if byID.TokensUsed != 0 || len(listed) != 1 || listed[0].TokensUsed != 0 || updated.TokensUsed != 0 {
			t.Fatalf("a user read in the new period shows the last one's usage: by id %d, listed %+v, updated %d", byID.TokensUsed, listed, updated.TokensUsed)
		}
		r = reserve(t, db, u, 500)
		// The March reservation is charged to March: April's total is untouched.
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, old.ID, 250))
		mustStatus(t, db, u.ID, 0, 500)
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 100))
		mustStatus(t, db, u.ID, 100, 0)
	})
	// A turn's admission in a new period rolls the period before it
	// holds (on Postgres the hold is then not folded into the lease's
	// statement, which would hold it in the old period).
	t.Run("MonthlyPeriodAdmission", func(t *testing.T) {
		db, clock, u := setup(t, 1000)
		db.SetBudgetConfig(coachd.BudgetConfig{Period: coachd.PeriodMonthly})
		s := MustCreateSession(t, db, u.ID)
		r := reserve(t, db, u, 200)
		must[*coachd.Reservation](t)(db.Finalize(ctx, u.ID, r.ID, 200))
		clock.Add(31 * 24 * time.Hour) // March → April
		adm := admitChat(t, db, clock.Now(), s, 300)
		if got := adm.Reservation.PeriodStart; got.Month() != time.April || adm.Reservation.Remaining != 700 {
			t.Fatalf("the admission's reservation: period %v, %d remaining; want April's, 700", got, adm.Reservation.Remaining)
		}
		mustStatus(t, db, u.ID, 0, 300)
	})
	// And it releases the user's stale holds first.
	t.Run("StaleHoldAdmission", func(t *testing.T) {
		db, clock, u := setup(t, 1000)
		db.SetBudgetConfig(coachd.BudgetConfig{TTL: time.Minute})
		s := MustCreateSession(t, db, u.ID)
		stale := reserve(t, db, u, 300)
		passTime(t, db, clock, 2*time.Minute) // past its expiry; no sweep ran
		admitChat(t, db, clock.Now(), s, 300)
		mustStatus(t, db, u.ID, 0, 300)
		if r := must[*coachd.Reservation](t)(db.FindReservation(ctx, u.ID, stale.ID)); r.State != coachd.ReservationExpired {
			t.Fatalf("the stale hold is %s after the admission, want expired", r.State)
		}
	})
	t.Run("RecordIdempotent", func(t *testing.T) {
		db, _, u := setup(t, 1000)
		s := MustCreateSession(t, db, u.ID)
		r := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Estimate: 300}))
		rec := func(key, hash string, final bool, tokens int64) (*coachd.Reservation, error) {
			return db.Record(ctx, u.ID, coachd.TurnRecord{
				SessionID: s.ID, ReservationID: r.ID, TokensUsed: tokens, Final: final,
				IdempotencyKey: key, RequestHash: hash,
				Messages: []*coachd.Message{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}},
			})
		}
		for range 2 {
			if got := must[*coachd.Reservation](t)(rec("k1", "h1", false, 100)); got.Charged != 100 {
				t.Fatalf("record: %+v", got)
			}
		}
		_, err := rec("k1", "other", false, 100)
		wantCode(t, err, coachd.ECONFLICT)
		mustStatus(t, db, u.ID, 100, 200)
		must[*coachd.Reservation](t)(rec("k2", "h2", true, 180))
		mustStatus(t, db, u.ID, 180, 0)
		if n := len(must[[]*coachd.Message](t)(db.History(ctx, u.ID, s.ID))); n != 2 {
			t.Fatalf("messages = %d, want 2", n)
		}
		other := MustCreateSession(t, db, u.ID)
		_, err = db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: other.ID, ReservationID: r.ID})
		wantCode(t, err, coachd.ECONFLICT)
	})
	t.Run("AbortAfterFinalRecord", func(t *testing.T) {
		// The turn's final record stored its message; an abort after it
		// sends that message again as partial, which is not stored twice.
		// An abort of a turn not so ended stores its partial messages.
		db, clock, u := setup(t, 1000)
		s := MustCreateSession(t, db, u.ID)
		partial := func() []*coachd.Message {
			return []*coachd.Message{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}, Partial: true}}
		}
		done := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Estimate: 300}))
		must[*coachd.Reservation](t)(db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: s.ID, ReservationID: done.ID, TokensUsed: 100, Final: true,
			Messages: []*coachd.Message{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}, {Role: coachd.RoleAssistant, Blocks: []coachd.Block{coachd.TextBlock("hello")}}}}))
		if got := must[*coachd.Reservation](t)(db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: s.ID, ReservationID: done.ID, Abort: true, Messages: partial()})); got.State != coachd.ReservationFinalized {
			t.Fatalf("abort after the final record: %+v", got)
		}
		if n := len(must[[]*coachd.Message](t)(db.History(ctx, u.ID, s.ID))); n != 2 {
			t.Fatalf("messages = %d, want the record's 2", n)
		}
		mustStatus(t, db, u.ID, 100, 0)
		// A turn whose hold expired under it, then aborted: its partial
		// message is all that is left of it.
		late := must[*coachd.Reservation](t)(db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, SessionID: s.ID, Estimate: 300}))
		clock.Add(coachd.DefaultReservationTTL + time.Second)
		must[int](t)(db.ExpireReservations(ctx))
		must[*coachd.Reservation](t)(db.Record(ctx, u.ID, coachd.TurnRecord{SessionID: s.ID, ReservationID: late.ID, Abort: true, Messages: partial()}))
		if n := len(must[[]*coachd.Message](t)(db.History(ctx, u.ID, s.ID))); n != 3 {
			t.Fatalf("messages = %d, want 3: the expired turn's partial message stored", n)
		}
		mustStatus(t, db, u.ID, 100, 0)
	})
	t.Run("Scoped", func(t *testing.T) {
		db, _, u := setup(t, 1000)
		v := budgetUser(t, db, 1000)
		r := reserve(t, db, u, 100)
		_, err := db.Finalize(ctx, v.ID, r.ID, 10)
		wantCode(t, err, coachd.ENOTFOUND)
		_, err = db.FindReservation(ctx, v.ID, r.ID)
		wantCode(t, err, coachd.ENOTFOUND)
	})
	t.Run("HitLimit", func(t *testing.T) {
		db, clock, u := setup(t, 1000)
		w := clock.Now().Truncate(time.Minute)
		for i := int64(1); i <= 3; i++ {
			n, ok, err := db.HitLimit(ctx, u.ID, coachd.LimitHit{Key: "rate", Window: w, Limit: 3})
			if err != nil || !ok || n != i {
				t.Fatalf("hit %d: %d %v %v", i, n, ok, err)
			}
		}
		if n, ok, err := db.HitLimit(ctx, u.ID, coachd.LimitHit{Key: "rate", Window: w, Limit: 3}); err != nil || ok || n != 3 {
			t.Fatalf("4th hit: %d %v %v", n, ok, err)
		}
		if _, ok, _ := db.HitLimit(ctx, u.ID, coachd.LimitHit{Key: "rate", Window: w.Add(time.Minute), Limit: 3}); !ok {
			t.Fatal("next window refused")
		}
		if err := db.SweepLimits(ctx, w.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := db.HitLimit(ctx, u.ID, coachd.LimitHit{Key: "rate", Window: w, Limit: 3}); !ok {
			t.Fatal("swept window still full")
		}
	})
	t.Run("UserLimits", func(t *testing.T) {
		db, _, u := setup(t, 1000)
		rl, mm := "5/10s", int64(50)
		got := must[*coachd.User](t)(db.UpdateUser(ctx, u.ID, coachd.UserUpdate{RateLimit: &rl, MonthlyMessages: &mm}))
		if got.RateLimit != rl || got.MonthlyMessages == nil || *got.MonthlyMessages != 50 {
			t.Fatalf("update: %+v", got)
		}
		back := must[*coachd.User](t)(db.FindUserByID(ctx, u.ID))
		if back.RateLimit != rl || *back.MonthlyMessages != 50 {
			t.Fatalf("read back: %+v", back)
		}
		bad := "lots"
		_, err := db.UpdateUser(ctx, u.ID, coachd.UserUpdate{RateLimit: &bad})
		wantCode(t, err, coachd.EINVALID)
	})
}

// admitChat admits a chat turn (a user message, the event log) on s as
// the store has it now, holding est, and fails the test if it is not.
func admitChat(t *testing.T, db *sqlstore.DB, now time.Time, s *coachd.Session, est int64) *coachd.Admission {
	t.Helper()
	ctx := context.Background()
	s = must[*coachd.Session](t)(db.FindSession(ctx, s.UserID, s.ID))
	a := admission(s, "A", now.Add(time.Minute), est)
	a.Message = &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}
	a.Stream = &coachd.StreamStart{Owner: "proc"}
	return must[*coachd.Admission](t)(db.AdmitTurn(ctx, a))
}
