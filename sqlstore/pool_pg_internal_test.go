package sqlstore

import (
	"context"
	"sync"
	"testing"
)

// TestPostgresPoolKeepsConnections: bursts of concurrent transactions,
// one after another, run on the same backends. A pool that kept fewer
// idle connections than a burst used closed the rest as the burst ended
// and started new backends for the next (each started, and each of its
// statements planned, again): under load that was about a tenth of
// Postgres's CPU a turn.
func TestPostgresPoolKeepsConnections(t *testing.T) {
	db := openPostgres(t)
	ctx := context.Background()
	const burst, bursts = 16, 3
	backends := map[int64]bool{}
	for range bursts {
		var ready sync.WaitGroup
		ready.Add(burst)
		release := make(chan struct{})
		pids := make(chan int64, burst)
		errs := make(chan error, burst)
		for range burst {
			go func() {
				var once sync.Once // ready even when the transaction never began
				_, err := writeTx(ctx, db, func(tx *tx) (struct{}, error) {
					var pid int64
					err := tx.queryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid)
					pids <- pid
					once.Do(ready.Done) // every transaction holds its connection at once
					<-release
					return struct{}{}, err
				})
				once.Do(ready.Done)
				errs <- err
			}()
		}
		ready.Wait()
		close(release)
		for range burst {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		for range burst {
			backends[<-pids] = true
		}
	}
	if len(backends) != burst {
		t.Fatalf("%d bursts of %d transactions ran on %d backends, want %d", bursts, burst, len(backends), burst)
	}
	if n := db.write.Stats().MaxIdleClosed; n != 0 {
		t.Fatalf("%d connections closed for want of idle room", n)
	}
}
