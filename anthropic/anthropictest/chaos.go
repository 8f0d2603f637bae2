package anthropictest

import (
	"encoding/json"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
)

// FaultReset cuts the connection with a TCP reset after After events: the
// handler hijacks the connection and closes it with SO_LINGER 0, so the
// client reads ECONNRESET rather than a clean EOF.
const FaultReset FaultKind = FaultStall + 1

// Chaos makes the fake fail at random: each POST /v1/messages draws once
// from a seeded generator and, with the given probabilities, is answered
// with a 529, a 429 (with retry-after), or a stream that ends in an error
// event, a TCP reset or a stall after a random number of events. The rest
// are served as usual (queue, script, echo). Counts per kind are in
// Faults.
type Chaos struct {
	Seed                 uint64
	Overloaded           float64 // 529 overloaded_error
	RateLimited          float64 // 429 rate_limit_error, retry-after
	ErrorEvent           float64 // `event: error` mid-stream
	Reset                float64 // TCP reset mid-stream
	Stall                float64 // no more events until the client leaves
	RetryAfterMS         string  // retry-after-ms of the 429s; default "100"
	MaxEventsBeforeFault int     // faults come after 1..this events; default 8
}

// DefaultChaos is the mix of issue 18: 5 % 529, 2 % 429, 2 % error event,
// 1 % reset, 1 % stall.
func DefaultChaos(seed uint64) Chaos {
	return Chaos{Seed: seed, Overloaded: 0.05, RateLimited: 0.02, ErrorEvent: 0.02, Reset: 0.01, Stall: 0.01}
}

// Fault kinds as counted by Faults.
const (
	ChaosOverloaded  = "overloaded_529"
	ChaosRateLimited = "rate_limited_429"
	ChaosErrorEvent  = "error_event"
	ChaosReset       = "tcp_reset"
	ChaosStall       = "stall"
)

type chaosState struct {
	cfg    Chaos
	rng    *rand.Rand
	counts map[string]int
}

// SetChaos turns random fault injection on (nil: off). It resets the counts.
func (s *Server) SetChaos(c *Chaos) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c == nil {
		s.chaos = nil
		return
	}
	cfg := *c
	if cfg.RetryAfterMS == "" {
		cfg.RetryAfterMS = "100"
	}
	if cfg.MaxEventsBeforeFault <= 0 {
		cfg.MaxEventsBeforeFault = 8
	}
	s.chaos = &chaosState{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x18)), counts: map[string]int{}}
}

// Faults returns how many faults of each kind chaos injected so far.
func (s *Server) Faults() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	if s.chaos != nil {
		for k, v := range s.chaos.counts {
			out[k] = v
		}
	}
	return out
}

// FaultSummary formats counts as "kind=n ..." in a stable order.
func FaultSummary(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Itoa(counts[k]))
	}
	return b.String()
}

// inject applies chaos to a reply about to be served.
func (s *Server) inject(reply Reply) Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chaos
	if c == nil || reply.Status != 0 || reply.err != nil {
		return reply
	}
	x := c.rng.Float64()
	after := 1 + c.rng.IntN(c.cfg.MaxEventsBeforeFault)
	cut := 0.0
	for _, f := range []struct {
		p    float64
		kind string
	}{
		{c.cfg.Overloaded, ChaosOverloaded}, {c.cfg.RateLimited, ChaosRateLimited},
		{c.cfg.ErrorEvent, ChaosErrorEvent}, {c.cfg.Reset, ChaosReset}, {c.cfg.Stall, ChaosStall},
	} {
		cut += f.p
		if x >= cut {
			continue
		}
		c.counts[f.kind]++
		switch f.kind {
		case ChaosOverloaded:
			h := http.Header{}
			h.Set("x-should-retry", "true")
			return Status(529, h, "")
		case ChaosRateLimited:
			h := http.Header{}
			h.Set("retry-after-ms", c.cfg.RetryAfterMS)
			h.Set("retry-after", "1")
			h.Set("x-should-retry", "true")
			return Status(429, h, "")
		case ChaosErrorEvent:
			return reply.ErrorAfter(after, "overloaded_error", "Overloaded")
		case ChaosReset:
			reply.Fault = Fault{Kind: FaultReset, After: after}
			return reply
		default:
			return reply.StallAfter(after)
		}
	}
	return reply
}

// reset hijacks the connection and closes it with a TCP RST.
func reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	conn.Close()
}

// ValidateHistory checks messages the way the fake checks a request's
// messages (roles, non-empty content, every tool_use answered by a
// tool_result in the next message and none unasked): what the API would
// say if the history were sent as is. It also asks that roles alternate,
// which the API tolerates by merging. A trailing assistant message with
// tool_use is an error, as in a request.
func ValidateHistory(msgs []coachd.ModelMessage) error {
	for i := 1; i < len(msgs); i++ {
		if msgs[i].Role == msgs[i-1].Role {
			return invalid("messages.%d: roles must alternate, two %q messages in a row", i, msgs[i].Role)
		}
	}
	body, err := json.Marshal(map[string]any{"model": "claude-validate", "max_tokens": 1, "messages": msgs})
	if err != nil {
		return err
	}
	if _, err := parseRequest(body, false); err != nil {
		return err
	}
	return nil
}
