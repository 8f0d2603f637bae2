package stream_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/stream"
)

// BenchmarkFollowLatency: how long an event takes from the turn's Live to
// a reader, in the same process (memory) and on another replica (the log,
// with the default batching and polling), on SQLite.
//
//	go test ./stream -run '^$' -bench FollowLatency -benchtime 200x
func BenchmarkFollowLatency(b *testing.B) {
	for _, remote := range []bool{false, true} {
		name := "local"
		if remote {
			name = "remote"
		}
		b.Run(name, func(b *testing.B) {
			e := mustEnv(b, filepath.Join(b.TempDir(), "c.db"))
			for _, h := range []*stream.Hub{e.a, e.b} {
				h.FlushEvery, h.PollEvery, h.AliveEvery, h.DeadAfter = stream.DefaultFlushEvery, stream.DefaultPollEvery, stream.DefaultAliveEvery, stream.DefaultDeadAfter
			}
			reader := e.a
			if remote {
				reader = e.b
			}
			s := &coachd.Session{UserID: e.user.ID, Agent: "coach", Title: "t"}
			if err := e.db.CreateSession(context.Background(), s); err != nil {
				b.Fatal(err)
			}
			l, err := e.a.Begin(context.Background(), e.user.ID, s.ID)
			if err != nil {
				b.Fatal(err)
			}
			got := make(chan time.Time, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go reader.Follow(ctx, e.user.ID, s.ID, coachd.EventID{}, l.Turn(), func(coachd.Event) error {
				got <- time.Now()
				return nil
			})
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				sent := time.Now()
				l.Send(coachd.Event{Seq: int64(i + 1), Type: coachd.EventTextDelta, Text: "x"})
				lat = append(lat, (<-got).Sub(sent))
			}
			b.StopTimer()
			l.Send(coachd.Event{Seq: int64(b.N + 1), Type: coachd.EventTurnEnded})
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
