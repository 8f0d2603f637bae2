package main

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/loadtest"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// BenchmarkLoad is the load benchmark of issue 13, in one process
// invocation and against one paced fake upstream: the bare SDK calling
// the fake with nothing stored (the floor), the bare SDK sending what
// coachd sends (its system prompt, tools and growing history: the floor
// that leaves only what coachd itself does), the bare SDK through a
// reverse proxy that stores nothing (the floor with the HTTP hop any
// server in coachd's place adds, hop_test.go), then full turns through a
// real `coachd serve` process on SQLite and on PostgreSQL, at 1 and 8
// clients, for plain and tool-round turns. It prints turns/s, time to
// first text p50/p99 and the delay per streamed event, with ratios to the
// floors, and reports the ratios as metrics. Each target's run is cut
// into 3 slices taken in turn with the other targets'. LOAD_DURATION sets
// each target's total time per row (default 3s), LOAD_CLIENTS the client
// counts (default "1,8").
//
//	go test ./cmd/coachd -run '^$' -bench Load -benchtime 1x
func BenchmarkLoad(b *testing.B) {
	const slices = 3
	dur := 3 * time.Second
	if d, err := time.ParseDuration(os.Getenv("LOAD_DURATION")); err == nil && d > 0 {
		dur = d
	}
	counts := []int{1, 8}
	if s := os.Getenv("LOAD_CLIENTS"); s != "" {
		var err error
		if counts, err = intList(s); err != nil {
			b.Fatal(err)
		}
	}
	fake := anthropictest.New()
	fake.SetScript(loadtest.ScriptAny(loadtest.DefaultPace))
	fake.SetRecording(false)
	up := httptest.NewServer(fake.Handler())
	defer up.Close()
	defer fake.Close()

	const admin = "bench-admin-key-0123456789"
	env := []string{"ANTHROPIC_BASE_URL=" + up.URL, "ANTHROPIC_API_KEY=bench", "COACHD_LOG_LEVEL=warn"}
	type server struct {
		name string
		url  string
		keys []string
	}
	start := func(name, dsn string) server {
		p := MustStart(b, env, "--db", dsn, "--admin-key", admin)
		keys, err := benchUsers(context.Background(), p.url, admin, 8)
		if err != nil {
			b.Fatal(err)
		}
		return server{name, p.url, keys}
	}
	servers := []server{start("coachd sqlite", b.TempDir()+"/load.db")}
	servers = append(servers, start("coachd postgres", pgtest.NewDatabase(b)))

	// The second floor sends what coachd sends: one request coachd made
	// gives its system prompt, tools and settings.
	fake.SetRecording(true)
	if _, err := loadtest.NewCoachd(servers[0].url, servers[0].keys, loadtest.Tool, 1).Turn(context.Background(), 0, 0); err != nil {
		b.Fatal(err)
	}
	coachReq := fake.Requests()[0].Raw
	fake.SetRecording(false)
	hop := MustHop(b, up.URL)

	for b.Loop() {
		var out strings.Builder
		for _, kind := range []loadtest.Kind{loadtest.Plain, loadtest.Tool} {
			for _, n := range counts {
				like := loadtest.NewDirect(up.URL, anthropic.DefaultModel, kind, n)
				if err := like.Like(coachReq, 10); err != nil {
					b.Fatal(err)
				}
				targets := []loadtest.Named{
					{Name: "bare SDK (floor)", Target: loadtest.NewDirect(up.URL, anthropic.DefaultModel, kind, n)},
					{Name: "bare SDK, coach's request", Target: like},
					{Name: "bare SDK through a proxy", Target: loadtest.NewDirect(hop, anthropic.DefaultModel, kind, n)},
				}
				for _, s := range servers {
					targets = append(targets, loadtest.Named{Name: s.name, Target: loadtest.NewCoachd(s.url, s.keys, kind, n)})
				}
				results := loadtest.Compare(context.Background(), n, dur, slices, targets...)
				floor, floorLike, floorHop := results[0], results[1], results[2]
				for i, s := range servers {
					r := results[i+3]
					if r.Errors > 0 {
						b.Errorf("%s, %s, %d clients: %d failed turns, first: %v", s.name, kind, n, r.Errors, r.FirstErr)
					}
					if r.Turns == 0 {
						continue
					}
					tag := fmt.Sprintf("%s-%s-%dc", strings.TrimPrefix(s.name, "coachd "), kind, n)
					if floor.Turns > 0 {
						b.ReportMetric(100*r.TurnsPerSec/floor.TurnsPerSec, tag+"-%floor")
						b.ReportMetric(float64((r.TTFTp50 - floor.TTFTp50).Microseconds()), tag+"-added-ttft-µs")
					}
					if floorLike.Turns > 0 {
						b.ReportMetric(100*r.TurnsPerSec/floorLike.TurnsPerSec, tag+"-%like")
					}
					if floorHop.Turns > 0 {
						b.ReportMetric(float64((r.TTFTp50 - floorHop.TTFTp50).Microseconds()), tag+"-over-hop-ttft-µs")
					}
				}
				fmt.Fprintf(&out, "\n== %s turns, %d client(s), %s each\n", kind, n, dur)
				loadtest.Report(&out, []*loadtest.Result{&floor, &floorLike, &floorHop}, results...)
			}
		}
		fmt.Fprint(os.Stdout, out.String())
	}
}
