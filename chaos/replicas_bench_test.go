package chaos

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// BenchmarkReplicas is the load test of two replicas on one Postgres:
// 32 clients run turns (a tool round and a text answer from the fake, no
// faults) against replica A, against B, and against both; each reports
// its turns/s.
//
//	go test ./chaos -run '^$' -bench Replicas -benchtime 400x
func BenchmarkReplicas(b *testing.B) {
	dsn := pgtest.NewDatabase(b)
	fake := anthropictest.NewServer()
	defer fake.Close()
	var n atomic.Int64
	fake.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
		if len(req.ToolResults()) > 0 {
			return anthropictest.Text("Done, noted.", 0)
		}
		return anthropictest.Blocks(anthropictest.TextBlock("Saving. ", 0),
			anthropictest.ToolUse(fmt.Sprintf("toolu_b_%d", n.Add(1)), "save_note", `{"note_type":"preference","title":"Load","content":"likes load tests"}`))
	})
	env := []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "COACHD_LOG_LEVEL=warn"}
	args := []string{"--db", dsn, "--admin-key", adminKey, "--rate-limit", "off", "--default-budget", "1000000000"}
	a, c := mustStart(b, env, args...), mustStart(b, env, args...)
	const clients = 32
	keys := make([]string, clients)
	for i := range keys {
		var u struct {
			APIKey string `json:"api_key"`
		}
		mustCall(b, a.url, adminKey, "POST", "/v1/users", fmt.Sprintf(`{"name":"load-%d"}`, i), 201, &u)
		keys[i] = u.APIKey
	}
	for _, tc := range []struct {
		name string
		urls []string
	}{{"A", []string{a.url}}, {"B", []string{c.url}}, {"both", []string{a.url, c.url}}} {
		b.Run(tc.name, func(b *testing.B) {
			var next, failed atomic.Int64
			start := time.Now()
			done := make(chan struct{}, clients)
			for g := range clients {
				go func() {
					defer func() { done <- struct{}{} }()
					cl := client.New(tc.urls[g%len(tc.urls)], keys[g], nil)
					for next.Add(1) <= int64(b.N) {
						_, err := cl.ChatStream(context.Background(), client.ChatRequest{Message: "log it"}, client.StreamOptions{},
							func(client.Event) error { return nil })
						if err != nil {
							failed.Add(1)
						}
					}
				}()
			}
			for range clients {
				<-done
			}
			if f := failed.Load(); f > 0 {
				b.Errorf("%d of %d turns failed", f, b.N)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "turns/s")
		})
	}
}
