package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// ratePer is the rate window of these tests: long, so that no window
// begins while one runs.
const ratePer = 1000 * time.Hour

// rateKey is the key the server counts a rate of ratePer under.
var rateKey = "rate/" + ratePer.String()

// count reads the user's count of a limit window without adding to it.
func (e *chatEnv) count(userID, key string, window time.Time) int64 {
	e.t.Helper()
	n, _, err := e.db.HitLimit(context.Background(), userID, coachd.LimitHit{Key: key, Window: window, Limit: 0})
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// fill counts the user's window up to n, behind the server's back.
func (e *chatEnv) fill(userID, key string, window time.Time, n int64) {
	e.t.Helper()
	for range n {
		if _, ok, err := e.db.HitLimit(context.Background(), userID, coachd.LimitHit{Key: key, Window: window, Limit: n}); err != nil || !ok {
			e.t.Fatalf("fill %s: %v %v", key, ok, err)
		}
	}
}

func (e *chatEnv) session(u testUser) string {
	e.t.Helper()
	s, err := u.c.CreateSession(context.Background(), "", "")
	if err != nil {
		e.t.Fatal(err)
	}
	return s.ID
}

// TestChatStreamLimitCounts: a turn on an existing session is counted in
// its admission, once: with a rate of 3, a new session's turn and two
// more are admitted and the fourth is refused (429 with usage 3), leaving
// no lease and no hold behind; requests that fail for their own reasons
// are counted too, as when the limits were counted first.
func TestChatStreamLimitCounts(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{Rate: coachd.RateLimit{N: 3, Per: ratePer}})
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Hi!", 5) })
	ctx := context.Background()
	w := time.Now().Truncate(ratePer)
	s := e.chat(ctx, e.alice.key, "", `{"message":"one"}`)
	if s.status != 200 {
		t.Fatalf("first %d %s", s.status, s.errBody.body)
	}
	id := s.header.Get("X-Coachd-Session-Id")
	body := fmt.Sprintf(`{"message":"more","session_id":%q}`, id)
	for i := 2; i <= 3; i++ {
		if s := e.chat(ctx, e.alice.key, "", body); s.status != 200 {
			t.Fatalf("turn %d: %d %s", i, s.status, s.errBody.body)
		}
		if n := e.count(e.alice.ID, rateKey, w); n != int64(i) {
			t.Fatalf("after turn %d the window counts %d", i, n)
		}
	}
	r := e.post(e.alice.key, "/v1/chat/stream", body, nil, nil)
	var ev map[string]any
	data, _ := strings.CutPrefix(string(r.body), "event: error\ndata: ")
	_ = json.Unmarshal([]byte(strings.TrimSpace(data)), &ev)
	if r.status != 429 || ev["type"] != coachd.ERATELIMITED || ev["usage"] != 3.0 || ev["limit"] != 3.0 || r.header.Get("Retry-After") == "" {
		t.Fatalf("fourth: %d %v %s", r.status, r.header, r.body)
	}
	// Nothing of the refused turn was kept: no hold, and once the limit
	// is raised the session is free.
	var me struct {
		Budget coachd.BudgetStatus `json:"budget"`
	}
	if r := e.do(request{method: "GET", path: "/v1/me", key: e.alice.key}); json.Unmarshal(r.body, &me) != nil || me.Budget.TokensReserved != 0 {
		t.Fatalf("me after the refusal: %s", r.body)
	}
	if r := e.do(request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"rate_limit":"5/1000h"}`}); r.status != 200 {
		t.Fatalf("patch %d %s", r.status, r.body)
	}
	if s := e.chat(ctx, e.alice.key, "", body); s.status != 200 {
		t.Fatalf("after raising the limit: %d %s", s.status, s.errBody.body)
	}
	if n := e.count(e.alice.ID, rateKey, w); n != 4 {
		t.Fatalf("the window counts %d, want 4", n)
	}

	// Failing requests count: an unknown session (404) and a budget too
	// small (402), each once.
	bob := e.MustUser("bob2")
	bobID := e.session(bob)
	if r := e.post(bob.key, "/v1/chat/stream", `{"message":"x","session_id":"sess_00000000000000000000000000"}`, nil, nil); r.status != 404 {
		t.Fatalf("unknown session: %d %s", r.status, r.body)
	}
	if r := e.do(request{method: "PATCH", path: "/v1/users/" + bob.ID, key: adminKey, body: `{"token_budget":1}`}); r.status != 200 {
		t.Fatalf("patch %d %s", r.status, r.body)
	}
	if r := e.post(bob.key, "/v1/chat/stream", fmt.Sprintf(`{"message":"x","session_id":%q}`, bobID), nil, nil); r.status != 402 {
		t.Fatalf("over budget: %d %s", r.status, r.body)
	}
	if n := e.count(bob.ID, rateKey, w); n != 2 {
		t.Fatalf("bob's window counts %d, want 2", n)
	}
}

// TestChatStreamLimitFirst: a user over the rate limit is answered 429
// by POST /v1/chat/stream and POST /v1/chat before any other error the
// request would get (bad query, bad body, invalid message, unknown
// session, spent budget), as when the limits were counted before anything
// else, and nothing of the refused turn is kept; an admitted turn is
// counted once; and a user over the monthly limit still
// has the request counted in the rate window first. Each case is a user
// whose window was filled behind the server's back, so the server has not
// seen them refused.
func TestChatStreamLimitFirst(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{Rate: coachd.RateLimit{N: 2, Per: ratePer}})
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Hi!", 5) })
	w := time.Now().Truncate(ratePer)
	cases := []struct {
		name, query, body string
		budget            bool // the user's budget is spent
	}{
		{name: "OK", body: `{"message":"hi","session_id":%q}`},
		{name: "ErrQuery", query: "?on_busy=never", body: `{"message":"hi","session_id":%q}`},
		{name: "ErrJSON", body: `{"message":`},
		{name: "ErrEmpty", body: `{"message":"","session_id":%q}`},
		{name: "ErrUnknownField", body: `{"mesage":"hi","session_id":%q}`},
		{name: "ErrNotFound", body: `{"message":"hi","session_id":"sess_00000000000000000000000000"}`},
		{name: "ErrBudget", body: `{"message":"hi","session_id":%q}`, budget: true},
		{name: "NewSession", body: `{"message":"hi"}`},
	}
	for _, path := range []string{"/v1/chat/stream", "/v1/chat"} {
		for i, c := range cases {
			t.Run(path+"/"+c.name, func(t *testing.T) {
				u := e.MustUser(fmt.Sprintf("u%d%s", i, strings.ReplaceAll(path, "/", "-")))
				id := e.session(u)
				if c.budget {
					if r := e.do(request{method: "PATCH", path: "/v1/users/" + u.ID, key: adminKey, body: `{"token_budget":1}`}); r.status != 200 {
						t.Fatalf("patch %d %s", r.status, r.body)
					}
				}
				e.fill(u.ID, rateKey, w, 2)
				body := c.body
				if strings.Contains(body, "%q") {
					body = fmt.Sprintf(body, id)
				}
				r := e.post(u.key, path+c.query, body, nil, nil)
				if r.status != 429 || r.errorCode() != coachd.ERATELIMITED || r.header.Get("Retry-After") == "" {
					t.Fatalf("got %d %s, want 429 rate_limit_exceeded", r.status, r.body)
				}
				if n := e.count(u.ID, rateKey, w); n != 2 {
					t.Fatalf("the window counts %d after a refusal", n)
				}
				// Nothing was taken: the session is free for a turn once the
				// window allows it.
				if r := e.do(request{method: "PATCH", path: "/v1/users/" + u.ID, key: adminKey, body: `{"rate_limit":"3/1000h","token_budget":100000}`}); r.status != 200 {
					t.Fatalf("patch %d %s", r.status, r.body)
				}
				if r := e.post(u.key, path, fmt.Sprintf(`{"message":"hi","session_id":%q}`, id), nil, nil); r.status != 200 {
					t.Fatalf("after the refusal: %d %s", r.status, r.body)
				}
				if n := e.count(u.ID, rateKey, w); n != 3 {
					t.Fatalf("an admitted turn left the window at %d, want 3", n)
				}
			})
		}
	}
	t.Run("Monthly", func(t *testing.T) {
		u := e.MustUser("monthly")
		id := e.session(u)
		if r := e.do(request{method: "PATCH", path: "/v1/users/" + u.ID, key: adminKey, body: `{"monthly_messages":1}`}); r.status != 200 {
			t.Fatalf("patch %d %s", r.status, r.body)
		}
		month := coachd.PeriodMonthly.Start(time.Now())
		e.fill(u.ID, "messages", month, 1)
		r := e.post(u.key, "/v1/chat/stream", fmt.Sprintf(`{"message":"hi","session_id":%q}`, id), nil, nil)
		if r.status != 429 || !strings.Contains(string(r.body), "Monthly message limit (1) reached.") {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		// The rate window counted it, as checkLimits counts the rate first.
		if n := e.count(u.ID, rateKey, w); n != 1 {
			t.Fatalf("the rate window counts %d, want 1", n)
		}
	})
}

// TestChatStreamLimitEarly: once a user was refused, their next request
// over the limit is answered at once, before its body is read (a client
// trickling its body is not waited for), as when the limits were counted
// before the body.
func TestChatStreamLimitEarly(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{Rate: coachd.RateLimit{N: 1, Per: ratePer}})
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Hi!", 5) })
	id := e.session(e.alice)
	body := fmt.Sprintf(`{"message":"hi","session_id":%q}`, id)
	if s := e.chat(context.Background(), e.alice.key, "", body); s.status != 200 {
		t.Fatalf("first %d %s", s.status, s.errBody.body)
	}
	if r := e.post(e.alice.key, "/v1/chat/stream", body, nil, nil); r.status != 429 {
		t.Fatalf("second %d %s", r.status, r.body)
	}
	c := e.rawConn(t)
	if _, err := io.WriteString(c, slowBodyHead("/v1/chat/stream", e.alice.key)); err != nil {
		t.Fatal(err)
	}
	resp, got := readResponse(t, c, bufio.NewReader(c), 5*time.Second)
	if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(string(got), coachd.ERATELIMITED) {
		t.Fatalf("got %d %s, want 429 at once", resp.StatusCode, got)
	}
}

// TestRateWindowLengthChange: when a user's rate window grows (an admin
// moves them from 2 a minute to 2 a day), the minute windows counted
// before began later than the running day's window. The sweeper deletes
// a window that a later one of the same limit followed, and must not take
// the running day's count for ended: the third request of the day stays
// refused after a sweep.
func TestRateWindowLengthChange(t *testing.T) {
	clock := &movingClock{t: time.Date(2026, 11, 28, 10, 30, 0, 0, time.UTC)}
	e := mustChatEnvDeps(t, func(d *server.Deps) {
		d.Clock = clock
		d.Limits = server.Limits{Rate: coachd.RateLimit{N: 2, Per: time.Minute}, DefaultBudget: 1_000_000}
	}, nil)
	preflight := func() int {
		t.Helper()
		return e.post(e.alice.key, "/v1/chat/preflight", `{"message":"hi"}`, nil, nil).status
	}
	if st := preflight(); st != 200 {
		t.Fatalf("first preflight: %d", st)
	}
	if r := e.do(request{method: "PATCH", path: "/v1/users/" + e.alice.ID, key: adminKey, body: `{"rate_limit":"2/24h"}`}); r.status != 200 {
		t.Fatalf("patch %d %s", r.status, r.body)
	}
	for i, want := range []int{200, 200, 429} {
		if st := preflight(); st != want {
			t.Fatalf("preflight %d of the day: %d, want %d", i+1, st, want)
		}
	}
	if err := e.db.SweepLimits(context.Background(), clock.Now()); err != nil {
		t.Fatal(err)
	}
	if st := preflight(); st != 429 {
		t.Fatalf("after a sweep, a third preflight of the day: %d, want 429 (the running day's count was swept)", st)
	}
}
