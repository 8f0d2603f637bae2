package anthropictest_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Advance(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }

// cacheBody is a request whose system prompt is sys (with a breakpoint)
// followed by msgs user/assistant texts, the last n of them marked.
func cacheBody(model, sys string, ttl string, msgs []string, marked ...int) string {
	cc := `{"type":"ephemeral"}`
	if ttl != "" {
		cc = fmt.Sprintf(`{"type":"ephemeral","ttl":%q}`, ttl)
	}
	var ms []string
	for i, m := range msgs {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		mark := ""
		for _, k := range marked {
			if k == i {
				mark = `,"cache_control":` + cc
			}
		}
		ms = append(ms, fmt.Sprintf(`{"role":%q,"content":[{"type":"text","text":%q%s}]}`, role, m, mark))
	}
	return fmt.Sprintf(`{"model":%q,"max_tokens":5,"system":[{"type":"text","text":%q,"cache_control":%s}],"messages":[%s]}`,
		model, sys, cc, strings.Join(ms, ","))
}

func usageOf(t *testing.T, body []byte) coachd.Usage {
	t.Helper()
	var m struct{ Usage coachd.Usage }
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return m.Usage
}

// TestCache: the fake bills a prompt cache the way the API does.
func TestCache(t *testing.T) {
	big := strings.Repeat("x", 4*2000) // 2000 tokens
	t.Run("WriteThenRead", func(t *testing.T) {
		srv := anthropictest.NewServer()
		defer srv.Close()
		c := &clock{t: time.Unix(1_800_000_000, 0)}
		srv.SetClock(c)
		_, _, b := post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", big, "", []string{"hello there"}), nil)
		first := usageOf(t, b)
		if first.CacheCreationInputTokens < 2000 || first.CacheReadInputTokens != 0 || first.InputTokens > 20 {
			t.Fatalf("first = %+v, want the system prompt written", first)
		}
		c.Advance(4 * time.Minute)
		_, _, b = post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", big, "", []string{"hello there", "hi", "more"}), nil)
		second := usageOf(t, b)
		if second.CacheReadInputTokens == 0 || second.CacheCreationInputTokens != 0 {
			t.Fatalf("second = %+v, want a read of the system prompt", second)
		}
		total := second.InputTokens + second.CacheReadInputTokens
		if total <= first.InputTokens+first.CacheCreationInputTokens {
			t.Errorf("second total %d not larger than the first's", total)
		}
		// A read refreshed the entry: 4 more minutes (8 after the write)
		// still hit; 5 minutes and a second after the last use do not.
		c.Advance(4 * time.Minute)
		_, _, b = post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", big, "", []string{"again"}), nil)
		if u := usageOf(t, b); u.CacheReadInputTokens == 0 {
			t.Fatalf("after a refresh = %+v, want a read", u)
		}
		c.Advance(5*time.Minute + time.Second)
		_, _, b = post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", big, "", []string{"again"}), nil)
		if u := usageOf(t, b); u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens == 0 {
			t.Fatalf("after expiry = %+v, want a new write", u)
		}
	})
	t.Run("OneHourTTL", func(t *testing.T) {
		srv := anthropictest.NewServer()
		defer srv.Close()
		c := &clock{t: time.Unix(1_800_000_000, 0)}
		srv.SetClock(c)
		post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", big, "1h", []string{"a"}), nil)
		c.Advance(50 * time.Minute)
		_, _, b := post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", big, "1h", []string{"b"}), nil)
		if u := usageOf(t, b); u.CacheReadInputTokens == 0 {
			t.Fatalf("after 50 minutes = %+v, want a 1h entry read", u)
		}
	})
	t.Run("MinimumPerModel", func(t *testing.T) {
		srv := anthropictest.NewServer()
		defer srv.Close()
		// 2000 tokens: enough for Sonnet (1024), not for Haiku 4.5 (4096).
		for _, model := range []string{"claude-haiku-4-5", "claude-haiku-4-5"} {
			_, _, b := post(t, srv, "/v1/messages", cacheBody(model, big, "", []string{"a"}), nil)
			if u := usageOf(t, b); u.CacheReadInputTokens != 0 || u.CacheCreationInputTokens != 0 || u.InputTokens < 2000 {
				t.Fatalf("%s = %+v, want all plain input", model, u)
			}
		}
		if got := anthropictest.MinCacheTokens("claude-opus-4-6"); got != 4096 {
			t.Errorf("opus 4.6 minimum %d", got)
		}
		if got := anthropictest.MinCacheTokens("claude-sonnet-5-5"); got != 1024 {
			t.Errorf("sonnet minimum %d", got)
		}
	})
	t.Run("Lookback", func(t *testing.T) {
		srv := anthropictest.NewServer()
		defer srv.Close()
		msgs := []string{"u0"}
		post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", "s", "", append(msgs, strings.Repeat("y", 5000), "u2"), 2), nil)
		// The breakpoint moved 4 blocks on: the earlier entry is found.
		msgs = []string{"u0", strings.Repeat("y", 5000), "u2", "a3", "u4", "a5", "u6"}
		_, _, b := post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", "s", "", msgs, 6), nil)
		u := usageOf(t, b)
		if u.CacheReadInputTokens < 1250 || u.CacheCreationInputTokens == 0 {
			t.Fatalf("moved breakpoint = %+v, want the old prefix read and the rest written", u)
		}
		// 25 blocks on, the old entry is out of the lookback window.
		long := []string{"u0", strings.Repeat("y", 5000), "u2"}
		for i := 3; i < 28; i++ {
			long = append(long, fmt.Sprintf("m%d", i))
		}
		long = append(long, "last")
		_, _, b = post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", "s", "", long, len(long)-1), nil)
		if u := usageOf(t, b); u.CacheReadInputTokens != 0 {
			t.Fatalf("beyond the lookback = %+v, want no read", u)
		}
	})
	t.Run("ErrFiveBreakpoints", func(t *testing.T) {
		srv := anthropictest.NewServer()
		defer srv.Close()
		status, _, b := post(t, srv, "/v1/messages", cacheBody("claude-sonnet-5-5", "s", "", []string{"a", "b", "c", "d", "e"}, 0, 1, 2, 3), nil)
		if status != 400 || !strings.Contains(string(b), "maximum of 4") {
			t.Fatalf("%d %s, want a 400 for 5 breakpoints", status, b)
		}
	})
}
