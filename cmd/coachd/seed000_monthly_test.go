package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// seedRoute is what seed 000's route.ts answered its page, played by
// seed000-client.mjs route: the preflight, then its own 402 when
// budget_remaining is 0, or the 500 Next.js makes of a throw.
type seedRoute struct {
	Status    int               `json:"status"`
	Body      map[string]string `json:"body"`
	Thrown    string            `json:"thrown"`
	Preflight struct {
		SessionID       string `json:"session_id"`
		ReservationID   string `json:"reservation_id"`
		BudgetRemaining int64  `json:"budget_remaining"`
		Error           struct {
			Code  string `json:"code"`
			Usage int64  `json:"usage"`
			Limit int64  `json:"limit"`
		} `json:"error"`
	} `json:"preflight"`
}

func playRoute(t *testing.T, node, url, key, msg, sessionID string) seedRoute {
	t.Helper()
	out, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed000-client.mjs"), "route", url, key, msg, sessionID).Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var r seedRoute
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	return r
}

// TestSeed000MonthlyCap: seed 000's route.ts throws on a preflight that
// is not 2xx (Next.js answers 500) and documents one answer for an
// allowance used up: budget_remaining 0, its own 402 "Budget exhausted".
// The monthly message cap is such an allowance (nothing the user can wait
// out in seconds), so its page shows that, not a server error; the rate
// limit stays a 429.
func TestSeed000MonthlyCap(t *testing.T) {
	node := needNode(t)
	const admin = "seed-admin-key-0123456789"
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=", "COACHD_PROVIDER=demo"}, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo",
		"--monthly-messages", "2", "--rate-limit", "off", "--admin-key", admin)
	var sid string
	for _, msg := range []string{"how do I rank up?", "and my rotation?"} {
		r := playRoute(t, node, p.url, p.key, msg, sid)
		if r.Status != 200 || r.Preflight.ReservationID == "" {
			t.Fatalf("preflight within the cap: %+v", r)
		}
		sid = r.Preflight.SessionID
	}
	var me struct {
		Budget struct {
			Reserved int64 `json:"tokens_reserved"`
		} `json:"budget"`
	}
	getJSON(t, p.url+"/v1/me", p.key, &me)
	held := me.Budget.Reserved
	for _, s := range []string{sid, ""} {
		r := playRoute(t, node, p.url, p.key, "one more?", s)
		if r.Status != 402 || r.Body["error"] != "Budget exhausted" || r.Preflight.ReservationID != "" || r.Preflight.SessionID != s ||
			r.Preflight.Error.Code != "rate_limit_exceeded" || r.Preflight.Error.Limit != 2 {
			t.Fatalf("over the monthly cap (session %q): %+v, want the seed's 402", s, r)
		}
	}
	getJSON(t, p.url+"/v1/me", p.key, &me)
	if me.Budget.Reserved != held {
		t.Fatalf("refused preflights hold %d tokens, want %d", me.Budget.Reserved, held)
	}

	t.Log("the rate limit stays a 429: the route has no answer for it")
	code, _, body := post(t, p.url+"/v1/users", admin, `{"name":"fast"}`)
	var u struct {
		ID  string `json:"id"`
		Key string `json:"api_key"`
	}
	if err := json.Unmarshal(body, &u); err != nil || code != 201 {
		t.Fatalf("create user: %d %s", code, body)
	}
	req, _ := http.NewRequest("PATCH", p.url+"/v1/users/"+u.ID, strings.NewReader(`{"rate_limit":"1/1h","monthly_messages":0}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("patch limits: %v %v", resp, err)
	}
	if r := playRoute(t, node, p.url, u.Key, "hi", ""); r.Status != 200 {
		t.Fatalf("first preflight: %+v", r)
	}
	if r := playRoute(t, node, p.url, u.Key, "hi again", ""); r.Status != 500 || r.Thrown != "Preflight failed" {
		t.Fatalf("over the rate: %+v, want the 429 the route throws on", r)
	}
}
