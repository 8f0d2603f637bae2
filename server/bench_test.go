package server_test

import (
	"bufio"
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// firstDelta posts a turn and returns the time to its first content_delta
// and to the end of the stream.
func firstDelta(b *testing.B, url, key, body string) (ttfb, total time.Duration) {
	start := time.Now()
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/stream", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("status %d", resp.StatusCode)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if ttfb == 0 && sc.Text() == "event: content_delta" {
			ttfb = time.Since(start)
		}
	}
	return ttfb, time.Since(start)
}

// modelFirstDelta calls the fake directly through the adapter: the
// baseline coachd's overhead is measured against.
func modelFirstDelta(b *testing.B, m coachd.Model) (ttfb, total time.Duration) {
	start := time.Now()
	s := m.Stream(context.Background(), &coachd.ModelRequest{MaxTokens: 1024,
		Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock("hi")}}}})
	defer s.Close()
	for s.Next() {
		if ttfb == 0 && s.Event().Type == coachd.ModelTextDelta {
			ttfb = time.Since(start)
		}
	}
	if err := s.Err(); err != nil {
		b.Fatal(err)
	}
	return ttfb, time.Since(start)
}

func pct(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[int(float64(len(s)-1)*p)].Microseconds()) / 1000
}

// BenchmarkStreamOverhead measures what coachd adds to a paced upstream
// (20 ms to the first event, 2 ms between events, 50 text deltas): the
// direct adapter call is the baseline, the full turn through
// /v1/chat/stream (auth, session, persistence, SSE) is measured in the
// same run. Reported: time to first delta p50/p99 and per-event delay.
func BenchmarkStreamOverhead(b *testing.B) {
	e := mustBenchEnv(b)
	reply := anthropictest.Text(strings.Repeat("word ", 50), 5).Paced(20*time.Millisecond, 2*time.Millisecond)
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	const events = 50 + 7 // deltas plus the message and block framing events
	report := func(b *testing.B, ttfb, total []time.Duration) {
		b.ReportMetric(pct(ttfb, .5), "ttfb-p50-ms")
		b.ReportMetric(pct(ttfb, .99), "ttfb-p99-ms")
		b.ReportMetric(pct(total, .5)/events, "ms/event-p50")
	}
	b.Run("direct", func(b *testing.B) {
		m := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: e.fake.URL(), NoCache: true})
		var ttfb, total []time.Duration
		for b.Loop() {
			a, z := modelFirstDelta(b, m)
			ttfb, total = append(ttfb, a), append(total, z)
		}
		report(b, ttfb, total)
	})
	b.Run("coachd", func(b *testing.B) {
		var ttfb, total []time.Duration
		for b.Loop() {
			a, z := firstDelta(b, e.url, e.alice.key, `{"message":"hi"}`)
			ttfb, total = append(ttfb, a), append(total, z)
		}
		report(b, ttfb, total)
	})
}

// BenchmarkTurn is whole turns per second against an unpaced fake: auth,
// session creation, reservation-free persistence of the user message and
// reply, SSE encoding. Run with -cpu 1 for "one core".
func BenchmarkTurn(b *testing.B) {
	e := mustBenchEnv(b)
	reply := anthropictest.Text("A short coaching reply of a few words.", 8)
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	for b.Loop() {
		firstDelta(b, e.url, e.alice.key, `{"message":"hi"}`)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// mustBenchEnv is a chat env whose user's budget outlasts any -benchtime
// (the default 100,000 tokens ran out after a few dozen turns).
func mustBenchEnv(b *testing.B) *chatEnv {
	e := MustChatEnvB(b)
	budget := int64(1) << 40
	if _, err := e.db.UpdateUser(context.Background(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		b.Fatal(err)
	}
	return e
}

// BenchmarkTurnDeltas is a whole turn streaming 20 and 220 text deltas:
// the difference between the two, over 200, is the cost of one streamed
// delta (time and allocations), end to end from the fake's bytes to the
// client's (run with -benchmem).
func BenchmarkTurnDeltas(b *testing.B) {
	for _, n := range []int{20, 220} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			e := mustBenchEnv(b)
			reply := anthropictest.Text(strings.Repeat("word ", n), len("word "))
			e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
			e.fake.SetRecording(false)
			for b.Loop() {
				firstDelta(b, e.url, e.alice.key, `{"message":"hi"}`)
			}
		})
	}
}
