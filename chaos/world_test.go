package chaos

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// toolServer is the app behind the chaos_lookup webhook: it answers at
// random with a result, a 500, garbage, an oversized body, a hang past the
// tool timeout, or a cut connection.
type toolServer struct {
	*httptest.Server
	mu     sync.Mutex
	rng    *mrand.Rand
	counts map[string]int
}

func newToolServer(seed uint64) *toolServer {
	ts := &toolServer{rng: mrand.New(mrand.NewPCG(seed, 0x700)), counts: map[string]int{}}
	ts.Server = httptest.NewServer(http.HandlerFunc(ts.serve))
	return ts
}

func (ts *toolServer) pick() string {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	x := ts.rng.IntN(100)
	kind := "ok"
	switch {
	case x < 12:
		kind = "http_500"
	case x < 20:
		kind = "garbage"
	case x < 24:
		kind = "oversized"
	case x < 30:
		kind = "hang"
	case x < 34:
		kind = "cut"
	}
	ts.counts[kind]++
	return kind
}

func (ts *toolServer) Counts() map[string]int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	out := map[string]int{}
	for k, v := range ts.counts {
		out[k] = v
	}
	return out
}

func (ts *toolServer) serve(w http.ResponseWriter, r *http.Request) {
	// Read the call first: net/http notices a client that went away (and
	// ends r.Context()) only once the body is consumed.
	io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
	switch ts.pick() {
	case "http_500":
		http.Error(w, `{"error":"boom"}`, http.StatusInternalServerError)
	case "garbage":
		junk := make([]byte, 64)
		rand.Read(junk)
		w.Header().Set("Content-Type", "application/json")
		w.Write(append([]byte(`{"result":"`), append(junk, 0, 0xff, 0xfe)...))
	case "oversized":
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"result":"`))
		w.Write([]byte(strings.Repeat("x", 4<<20)))
		w.Write([]byte(`"}`))
	case "hang":
		<-r.Context().Done() // past the agent's 1 s tool timeout
	case "cut":
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0)
			}
			conn.Close()
		}
	default:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"result":"found 3 items for you"}`)
	}
}

// script is the model's side of the conversation: after tool results it
// mostly answers in text; otherwise it calls tools (the webhook, notes,
// several at once) or answers, at random.
type script struct {
	mu  sync.Mutex
	rng *mrand.Rand
	n   int
}

func newScript(seed uint64) *script {
	return &script{rng: mrand.New(mrand.NewPCG(seed, 0x5c))}
}

func (s *script) reply(req *anthropictest.Request) anthropictest.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	afterTools := len(req.ToolResults()) > 0
	x := s.rng.IntN(100)
	if (afterTools && x < 80) || (!afterTools && x < 45) {
		return anthropictest.Text(fmt.Sprintf("Here is my answer number %d, short and to the point.", s.rng.IntN(1000)), 6)
	}
	id := func() string { s.n++; return fmt.Sprintf("toolu_chaos_%06d", s.n) }
	q, _ := json.Marshal(map[string]string{"query": fmt.Sprintf("item %d", s.rng.IntN(100))})
	blocks := []anthropictest.BlockSpec{
		anthropictest.TextBlock("Let me check. ", 4),
		anthropictest.ToolUse(id(), "chaos_lookup", string(q), 5),
	}
	switch s.rng.IntN(3) {
	case 0:
		blocks = append(blocks, anthropictest.ToolUse(id(), "save_note",
			`{"note_type":"preference","title":"Chaos","content":"prefers short answers"}`))
	case 1:
		blocks = append(blocks, anthropictest.ToolUse(id(), "chaos_lookup", `{"query":"second"}`))
	}
	return anthropictest.Blocks(blocks...)
}

// validRequests re-checks every request the fake received: the history
// coachd sent must pair every tool_use with a tool_result and alternate
// roles. It returns how many did not, and how many bodies were cut in
// transit.
func validRequests(reqs []anthropictest.Request) (bad, truncated int, first string) {
	for _, r := range reqs {
		if r.Path != "/v1/messages" {
			continue
		}
		var body struct {
			Messages []coachd.ModelMessage `json:"messages"`
		}
		if err := json.Unmarshal(r.Raw, &body); err != nil {
			// Not JSON at all: the body was cut while it was sent (a
			// SIGKILL mid-request); the fake refused it unread.
			truncated++
			continue
		}
		if err := anthropictest.ValidateHistory(body.Messages); err != nil {
			if bad == 0 {
				first = err.Error()
			}
			bad++
		}
	}
	return bad, truncated, first
}
