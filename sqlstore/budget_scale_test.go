package sqlstore_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestReservationRaceScale is the budget race at scale: workers run
// random reserve / charge / finalize / abort / expire / late finalize /
// abandon (the process dies between reserve and settle) operations on a
// few users with tight budgets, in batches; after every batch the sweeper
// runs and the invariants are checked: every user's cache equals the
// ledger, no hold is active past its expiry, and used + reserved stays
// within the budget — plus what late finalizes charged after their hold
// was released, which the design charges on purpose (real usage is never
// dropped) and which is the only way past the budget.
//
// COACHD_BUDGET_OPS sets the operations per backend (the figure is
// 100000); the default keeps go test ./sqlstore fast.
func TestReservationRaceScale(t *testing.T) {
	ops := 2000
	if testing.Short() {
		ops = 500
	}
	if v := os.Getenv("COACHD_BUDGET_OPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("COACHD_BUDGET_OPS=%q: want a positive number", v)
		}
		ops = n
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := MustOpen(t, b.newDSN(t), coachd.SystemClock{})
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: time.Hour})
			s := newScaleRun(t, db, 6, 16, 0x18)
			start := time.Now()
			batch := max(200, ops/20)
			for done := 0; done < ops; done += batch {
				s.batch(min(batch, ops-done))
				s.check()
				if t.Failed() {
					t.Fatalf("after %d operations (seed %#x): %v", done+batch, 0x18, s.counts)
				}
			}
			el := time.Since(start)
			t.Logf("%s: %d operations (%d batches, invariants after each), %.0f ops/s: %v",
				b.name, s.total(), (ops+batch-1)/batch, float64(s.total())/el.Seconds(), s.counts)
		})
	}
}

type scaleUser struct {
	id     string
	budget int64
}

type scaleRun struct {
	t       *testing.T
	db      *sqlstore.DB
	users   []scaleUser
	workers []*scaleWorker

	mu     sync.Mutex
	late   map[string]int64 // late finalize charges per user
	counts map[string]int
}

type scaleWorker struct {
	rng  *rand.Rand
	held []*coachd.Reservation
	gone []*coachd.Reservation // expired: a late finalize may come
}

func newScaleRun(t *testing.T, db *sqlstore.DB, users, workers int, seed uint64) *scaleRun {
	s := &scaleRun{t: t, db: db, late: map[string]int64{}, counts: map[string]int{}}
	for i := range users {
		budget := int64(200 + 300*i)
		s.users = append(s.users, scaleUser{budgetUser(t, db, budget).ID, budget})
	}
	for w := range workers {
		s.workers = append(s.workers, &scaleWorker{rng: rand.New(rand.NewPCG(seed, uint64(w)))})
	}
	return s
}

func (s *scaleRun) total() int {
	n := 0
	for _, v := range s.counts {
		n += v
	}
	return n
}

// batch runs n operations spread over the workers at once.
func (s *scaleRun) batch(n int) {
	var wg sync.WaitGroup
	per := (n + len(s.workers) - 1) / len(s.workers)
	for _, w := range s.workers {
		wg.Go(func() {
			for range per {
				s.op(w)
			}
		})
	}
	wg.Wait()
}

func (s *scaleRun) count(op string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts[op]++
	if err != nil && coachd.ErrorCode(err) != coachd.EBUDGET {
		s.t.Errorf("%s: %v", op, err)
	}
}

func (s *scaleRun) op(w *scaleWorker) {
	ctx := context.Background()
	db := s.db
	if len(w.held) == 0 || w.rng.IntN(3) == 0 {
		ui := w.rng.IntN(len(s.users))
		r, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: s.users[ui].id, Estimate: int64(1 + w.rng.IntN(100))})
		switch {
		case err == nil:
			w.held = append(w.held, r)
			s.count("reserve", err)
		case coachd.ErrorCode(err) == coachd.EBUDGET:
			s.count("reserve_refused", nil)
			// The app tops the budget up, racing the others' reserves.
			// Under the lock, so the stored budget is the last one set.
			s.mu.Lock()
			s.users[ui].budget += 300
			budget := s.users[ui].budget
			_, err = db.UpdateUser(ctx, s.users[ui].id, coachd.UserUpdate{TokenBudget: &budget})
			s.mu.Unlock()
			s.count("raise_budget", err)
		default:
			s.count("reserve", err)
		}
		return
	}
	if len(w.gone) > 0 && w.rng.IntN(4) == 0 {
		// A late finalize: the turn outlived its hold and settles now.
		r := w.gone[len(w.gone)-1]
		w.gone = w.gone[:len(w.gone)-1]
		used := int64(w.rng.IntN(int(r.Estimate) + 1))
		before, err := db.FindReservation(ctx, r.UserID, r.ID)
		if err == nil {
			var after *coachd.Reservation
			after, err = db.Finalize(ctx, r.UserID, r.ID, used)
			if err == nil {
				s.mu.Lock()
				s.late[r.UserID] += after.Charged - before.Charged
				s.mu.Unlock()
			}
		}
		s.count("late_finalize", err)
		return
	}
	i := w.rng.IntN(len(w.held))
	r := w.held[i]
	drop := func() { w.held = append(w.held[:i], w.held[i+1:]...) }
	used := int64(w.rng.IntN(int(r.Estimate) + 1))
	var err error
	switch op := w.rng.IntN(6); op {
	case 0:
		_, err = db.Charge(ctx, r.UserID, r.ID, used/2)
		s.count("charge", err)
	case 1:
		_, err = db.Finalize(ctx, r.UserID, r.ID, used)
		drop()
		s.count("finalize", err)
	case 2:
		_, err = db.Abort(ctx, r.UserID, r.ID, used)
		drop()
		s.count("abort", err)
	case 3: // the hold outlives its expiry and the sweeper releases it
		err = rawExec(s.t, db, `UPDATE reservations SET expires_at = ? WHERE id = ?`, rawTime(db, time.Now().Add(-time.Second)), r.ID)
		if err == nil {
			_, err = db.ExpireReservations(ctx)
		}
		drop()
		w.gone = append(w.gone, r)
		s.count("expire", err)
	case 4: // the process dies between reserve and settle: nobody settles
		err = rawExec(s.t, db, `UPDATE reservations SET expires_at = ? WHERE id = ?`, rawTime(db, time.Now().Add(-time.Millisecond)), r.ID)
		drop()
		s.count("kill", err)
	case 5: // a retried finalize of the same total
		if _, err = db.Finalize(ctx, r.UserID, r.ID, used); err == nil {
			_, err = db.Finalize(ctx, r.UserID, r.ID, used)
		}
		drop()
		s.count("finalize_twice", err)
	}
}

// check runs the sweeper and asserts the invariants.
func (s *scaleRun) check() {
	t, ctx := s.t, context.Background()
	if _, err := s.db.ExpireReservations(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rawCount(t, s.db, `SELECT count(*) FROM reservations WHERE state = 'active' AND expires_at < ?`, rawTime(s.db, time.Now())); n != 0 {
		t.Errorf("%d holds active past their expiry after the sweep", n)
	}
	drift, err := s.db.CheckLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range drift {
		t.Errorf("ledger drift: %+v", d)
	}
	for _, u := range s.users {
		st, err := s.db.BudgetStatus(ctx, u.id)
		if err != nil {
			t.Fatal(err)
		}
		if bound := u.budget + s.late[u.id]; st.TokensUsed+st.TokensReserved > bound {
			t.Errorf("user %s: used %d + reserved %d > budget %d + late %d", u.id, st.TokensUsed, st.TokensReserved, u.budget, s.late[u.id])
		}
		if st.TokensReserved < 0 || st.TokensUsed < 0 {
			t.Errorf("user %s: negative totals %+v", u.id, st)
		}
	}
}
