package sqlstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore"
)

// TestReservationRace is the property test of the budget: in each trial
// 200 goroutines race on one user whose budget fits exactly k reservations.
// First they all reserve at once: at most k (here exactly k) are admitted.
// Then they race random finalize / abort / expire (abandon, released by
// the sweeper) / charge-finalize-refinalize / reserve-again operations,
// charging at most their estimate (reserve: max: usage grows through
// Charge while the hold covers it; a re-finalize is a retry of the same
// total — a larger one after release is charged too, see TestBudget, but
// is no longer covered by a hold). After every trial the ledger invariant
// holds and spend never exceeded the budget.
func TestReservationRace(t *testing.T) {
	trials := map[string]int{"sqlite": 12, "postgres": 12}
	if testing.Short() {
		trials = map[string]int{"sqlite": 3, "postgres": 3}
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := MustOpen(t, b.newDSN(t), coachd.SystemClock{})
			db.SetBudgetConfig(coachd.BudgetConfig{TTL: time.Hour})
			rng := rand.New(rand.NewPCG(1, uint64(len(b.name))))
			start := time.Now()
			ops := 0
			for trial := range trials[b.name] {
				k := 1 + rng.IntN(20)
				ops += raceTrial(t, db, k, rng.Uint64())
				if t.Failed() {
					t.Fatalf("trial %d (k=%d) failed", trial, k)
				}
			}
			t.Logf("%s: %d trials × 200 goroutines, %d operations, %s", b.name, trials[b.name], ops, time.Since(start).Round(time.Millisecond))
		})
	}
}

const raceEstimate = 100

func raceTrial(t *testing.T, db *sqlstore.DB, k int, seed uint64) int {
	ctx := context.Background()
	budget := int64(k * raceEstimate)
	u := budgetUser(t, db, budget)
	var admitted, ops atomic.Int64
	var wg sync.WaitGroup
	gate := make(chan struct{})
	var phase2 sync.WaitGroup
	phase2.Add(200)
	over := make(chan string, 200)
	check := func() {
		st, err := db.BudgetStatus(ctx, u.ID)
		if err != nil {
			over <- err.Error()
			return
		}
		if st.TokensUsed+st.TokensReserved > budget {
			over <- fmt.Sprintf("used %d + reserved %d over budget %d", st.TokensUsed, st.TokensReserved, budget)
		}
	}
	for g := range 200 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(g)))
			<-gate
			r, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: raceEstimate})
			ops.Add(1)
			if err == nil {
				admitted.Add(1)
			} else if coachd.ErrorCode(err) != coachd.EBUDGET {
				over <- err.Error()
			}
			phase2.Done()
			phase2.Wait() // everyone has tried once: admissions are counted
			for range 3 {
				if r == nil {
					if rng.IntN(2) == 0 {
						r, _ = db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: raceEstimate})
						ops.Add(1)
					}
					continue
				}
				used := int64(rng.IntN(raceEstimate + 1))
				switch rng.IntN(5) {
				case 0: // finalize
					_, err = db.Finalize(ctx, u.ID, r.ID, used)
					r = nil
				case 1: // abort
					_, err = db.Abort(ctx, u.ID, r.ID, used)
					r = nil
				case 2: // the holder dies: its hold expires
					err = rawExec(t, db, `UPDATE reservations SET expires_at = ? WHERE id = ?`, rawTime(db, time.Now().Add(-time.Second)), r.ID)
					if err == nil {
						_, err = db.ExpireReservations(ctx)
					}
					r = nil
				case 3: // charge a round, finalize, then re-finalize (a retry)
					if _, err = db.Charge(ctx, u.ID, r.ID, used/2); err == nil {
						if _, err = db.Finalize(ctx, u.ID, r.ID, used); err == nil {
							_, err = db.Finalize(ctx, u.ID, r.ID, used)
						}
					}
					r = nil
				case 4: // progress charge, keeps the hold
					_, err = db.Charge(ctx, u.ID, r.ID, used/2)
				}
				ops.Add(1)
				if err != nil {
					over <- err.Error()
				}
				check()
			}
			if r != nil {
				_, _ = db.Finalize(ctx, u.ID, r.ID, raceEstimate)
			}
		})
	}
	close(gate)
	wg.Wait()
	close(over)
	for msg := range over {
		t.Errorf("k=%d: %s", k, msg)
		break
	}
	if got := admitted.Load(); got > int64(k) {
		t.Errorf("k=%d: admitted %d > k", k, got)
	}
	MustLedgerOK(t, db)
	st, err := db.BudgetStatus(ctx, u.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.TokensUsed > budget || st.TokensReserved != 0 {
		t.Errorf("k=%d: used %d (budget %d), reserved %d", k, st.TokensUsed, budget, st.TokensReserved)
	}
	return int(ops.Load())
}

// BenchmarkReserveFinalize measures reserve + finalize pairs for one hot
// user with 64 goroutines (b.SetParallelism(64 / GOMAXPROCS)).
func BenchmarkReserveFinalize(b *testing.B) {
	ctx := context.Background()
	for _, bk := range backends {
		// The baseline is the floor for the same shape of work: two
		// single-row write transactions on the same hot user row.
		b.Run(bk.name+"/baseline_two_updates", func(b *testing.B) {
			db := MustOpen(b, bk.newDSN(b), coachd.SystemClock{})
			u := budgetUser(b, db, 1<<60)
			budget := int64(1 << 60)
			hot(b, func() error {
				for range 2 {
					if _, err := db.UpdateUser(ctx, u.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
						return err
					}
				}
				return nil
			})
		})
		b.Run(bk.name+"/reserve_finalize", func(b *testing.B) {
			db := MustOpen(b, bk.newDSN(b), coachd.SystemClock{})
			u := budgetUser(b, db, 1<<60)
			hot(b, func() error {
				r, err := db.Reserve(ctx, coachd.ReserveRequest{UserID: u.ID, Estimate: 1000})
				if err != nil {
					return err
				}
				_, err = db.Finalize(ctx, u.ID, r.ID, 500)
				return err
			})
			b.StopTimer()
			MustLedgerOK(b, db)
		})
	}
}

// hot runs op from 64 goroutines and reports ops/s.
func hot(b *testing.B, op func() error) {
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := op(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "pairs/s")
}
