// Package loadtest measures what coachd adds to a turn. It plays the same
// scripted conversation two ways against one paced fake upstream: the bare
// Anthropic SDK calling the fake with nothing stored (the floor), and full
// turns through a coachd server's /v1/chat/stream. Clients run in
// parallel; the figures are turns per second, time to first text and the
// delay per streamed event, reported as ratios to the floor.
package loadtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// Kind is the shape of a benchmark turn.
type Kind string

const (
	// Plain: the model answers with text.
	Plain Kind = "plain"
	// Tool: the model calls save_note, then answers with text once the
	// result is in (one tool round).
	Tool Kind = "tool"
)

// Deltas is how many text deltas the reply streams.
const Deltas = 20

// Pace is the fake's timing: before its first event and between events.
type Pace struct{ First, Each time.Duration }

// DefaultPace is a fast upstream: coachd's own cost is what shows.
var DefaultPace = Pace{First: time.Millisecond, Each: 0}

// noteInput is the save_note call of a tool turn.
const noteInput = `{"note_type":"insight","title":"Load test","content":"The user asked for a load test."}`

// Script answers benchmark turns: for a request whose last message holds
// tool results, or any request of a plain turn, text in Deltas pieces; for
// the first request of a tool turn, a save_note call. The text turn is the
// same for both kinds, so their costs compare.
func Script(kind Kind, pace Pace) func(*anthropictest.Request) anthropictest.Reply {
	text := strings.Repeat("word ", Deltas)
	answer := anthropictest.Text(text, len("word ")).Paced(pace.First, pace.Each)
	call := anthropictest.Blocks(anthropictest.ToolUse("", "save_note", noteInput)).Paced(pace.First, pace.Each)
	return func(req *anthropictest.Request) anthropictest.Reply {
		if kind == Tool && len(req.ToolResults()) == 0 && wantsTool(req) {
			return call
		}
		return answer
	}
}

// ScriptAny answers by the user's message: a message starting "tool:"
// gets a tool round, anything else plain text, so one fake serves both
// kinds (the `coachd fake-anthropic --bench` mode).
func ScriptAny(pace Pace) func(*anthropictest.Request) anthropictest.Reply {
	tool, plain := Script(Tool, pace), Script(Plain, pace)
	return func(req *anthropictest.Request) anthropictest.Reply {
		if strings.HasPrefix(req.LastUserText(), "tool:") {
			return tool(req)
		}
		return plain(req)
	}
}

// wantsTool reports whether the request offers save_note.
func wantsTool(req *anthropictest.Request) bool { return req.HasTool("save_note") }

// Message is the user message a client sends for kind: the "tool:" prefix
// lets ScriptAny tell the kinds apart.
func Message(kind Kind, client, turn int) string {
	if kind == Tool {
		return fmt.Sprintf("tool: client %d turn %d", client, turn)
	}
	return fmt.Sprintf("client %d turn %d", client, turn)
}

// Sample is one measured turn.
type Sample struct {
	TTFT   time.Duration // request start to the first text delta
	Total  time.Duration // request start to the end of the stream
	Events int           // text deltas seen
}

// Target plays one turn for a client (0 ≤ client < Clients).
type Target interface {
	Turn(ctx context.Context, client, turn int) (Sample, error)
}

// Result summarises a run.
type Result struct {
	Name         string
	Clients      int
	Turns        int
	Errors       int
	FirstErr     error
	Elapsed      time.Duration
	TurnsPerSec  float64
	TTFTp50      time.Duration
	TTFTp99      time.Duration
	PerEventP50  time.Duration // (total − ttft) / deltas, p50
	TotalP50     time.Duration
	MeanTurnTime time.Duration
	Samples      []Sample
}

// Run plays turns with clients in parallel until d has passed (each
// client finishes the turn it is in), after warm turns per client that
// are not counted.
func Run(ctx context.Context, name string, t Target, clients int, d time.Duration, warm int) Result {
	var (
		mu      sync.Mutex
		samples []Sample
		errs    int
		first   error
		wg      sync.WaitGroup
	)
	for c := range clients {
		for i := range warm {
			if _, err := t.Turn(ctx, c, -1-i); err != nil {
				return Result{Name: name, Clients: clients, Errors: 1, FirstErr: fmt.Errorf("warm-up: %w", err)}
			}
		}
	}
	start := time.Now()
	deadline := start.Add(d)
	for c := range clients {
		wg.Go(func() {
			for turn := 0; time.Now().Before(deadline) && ctx.Err() == nil; turn++ {
				s, err := t.Turn(ctx, c, turn)
				mu.Lock()
				if err != nil {
					errs++
					if first == nil {
						first = err
					}
				} else {
					samples = append(samples, s)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return summarize(Result{Name: name, Clients: clients, Errors: errs, FirstErr: first, Elapsed: time.Since(start), Samples: samples})
}

// Merge sums runs of one target made in slices (interleaved with the
// other targets', so a machine whose load drifts weighs on all alike).
func Merge(runs ...Result) Result {
	if len(runs) == 0 {
		return Result{}
	}
	m := Result{Name: runs[0].Name, Clients: runs[0].Clients}
	for _, r := range runs {
		m.Errors += r.Errors
		m.Elapsed += r.Elapsed
		m.Samples = append(m.Samples, r.Samples...)
		if m.FirstErr == nil {
			m.FirstErr = r.FirstErr
		}
	}
	return summarize(m)
}

// summarize computes r's figures from its samples.
func summarize(r Result) Result {
	samples := r.Samples
	r.Turns = len(samples)
	if len(samples) == 0 {
		if r.FirstErr == nil {
			r.FirstErr = errors.New("no turn finished")
		}
		return r
	}
	r.TurnsPerSec = float64(len(samples)) / r.Elapsed.Seconds()
	ttft := make([]time.Duration, len(samples))
	total := make([]time.Duration, len(samples))
	per := make([]time.Duration, len(samples))
	var sum time.Duration
	for i, s := range samples {
		ttft[i], total[i] = s.TTFT, s.Total
		if s.Events > 1 {
			per[i] = (s.Total - s.TTFT) / time.Duration(s.Events-1)
		}
		sum += s.Total
	}
	r.TTFTp50, r.TTFTp99 = pct(ttft, .50), pct(ttft, .99)
	r.TotalP50, r.PerEventP50 = pct(total, .50), pct(per, .50)
	r.MeanTurnTime = sum / time.Duration(len(samples))
	return r
}

func pct(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(float64(len(s)-1)*p)]
}

// Report writes results as a table with ratios to each of floors.
func Report(w io.Writer, floors []*Result, results ...Result) {
	fmt.Fprintf(w, "%-28s %7s %7s %9s %10s %10s %10s %10s\n",
		"target", "clients", "turns", "turns/s", "ttft p50", "ttft p99", "per event", "errors")
	for _, r := range results {
		fmt.Fprintf(w, "%-28s %7d %7d %9.1f %10s %10s %10s %10d\n", r.Name, r.Clients, r.Turns,
			r.TurnsPerSec, us(r.TTFTp50), us(r.TTFTp99), us(r.PerEventP50), r.Errors)
		if r.FirstErr != nil {
			fmt.Fprintf(w, "  first error: %v\n", r.FirstErr)
		}
		for _, floor := range floors {
			if floor == nil || floor.Turns == 0 || r.Turns == 0 || isFloor(floors, r.Name) {
				continue
			}
			fmt.Fprintf(w, "  vs %s: %.1f %% of its turns/s, ttft %+s p50 (%+s p99), per event %+s\n",
				floor.Name, 100*r.TurnsPerSec/floor.TurnsPerSec, us(r.TTFTp50-floor.TTFTp50),
				us(r.TTFTp99-floor.TTFTp99), us(r.PerEventP50-floor.PerEventP50))
		}
	}
}

func isFloor(floors []*Result, name string) bool {
	for _, f := range floors {
		if f != nil && f.Name == name {
			return true
		}
	}
	return false
}

// us formats a duration in microseconds or milliseconds.
func us(d time.Duration) string {
	if d > 10*time.Millisecond || d < -10*time.Millisecond {
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%dµs", d.Microseconds())
}

// Named is a target with the name its results are reported under.
type Named struct {
	Name string
	Target
}

// Compare runs targets with clients in parallel for d each, cut into
// slices taken in turn (target 1, 2, …, 1, 2, …), so that load from
// elsewhere on the machine falls on all of them alike, and returns each
// target's merged result in order. The first slice of each starts with 2
// uncounted warm-up turns per client.
func Compare(ctx context.Context, clients int, d time.Duration, slices int, targets ...Named) []Result {
	slices = max(slices, 1)
	runs := make([][]Result, len(targets))
	for slice := range slices {
		warm := 0
		if slice == 0 {
			warm = 2
		}
		for i, t := range targets {
			runs[i] = append(runs[i], Run(ctx, t.Name, t.Target, clients, d/time.Duration(slices), warm))
		}
	}
	out := make([]Result, len(targets))
	for i := range runs {
		out[i] = Merge(runs[i]...)
	}
	return out
}
