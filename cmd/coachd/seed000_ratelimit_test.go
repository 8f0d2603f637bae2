package main

import (
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeed000RateLimitedPreflight pins what seed 000's route makes of a
// preflight the rate limit refuses. Its route has one message of its own
// for a refused turn, its 402 "Budget exhausted", read from a 200 whose
// budget_remaining is 0; it has none for a rate limit, and throws (Next.js
// answers 500) on any other status, as it would against its own backend,
// whose preflight rate-limits first. coachd answers 429 with Retry-After:
// a 200 would tell a user who only went too fast that the budget is gone,
// and budget_remaining above 0 would send the route into its model loop
// with nothing held. Nothing is held and no session is made.
func TestSeed000RateLimitedPreflight(t *testing.T) {
	node := needNode(t)
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1"},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", filepath.Join("..", "..", "examples", "rlcoach"), "--demo",
		"--rate-limit", "1/1h")
	route := func() (out struct {
		Status    int    `json:"status"`
		Thrown    string `json:"thrown"`
		Preflight struct {
			ReservationID   string `json:"reservation_id"`
			EstimatedTokens int64  `json:"estimated_tokens"`
		} `json:"preflight"`
	}) {
		b, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed000-client.mjs"), "route", p.url, p.key, "how do I rotate?").Output()
		if err != nil || json.Unmarshal(b, &out) != nil {
			t.Fatalf("node: %v\n%s", err, b)
		}
		return out
	}
	first := route()
	if first.Status != 200 || first.Preflight.ReservationID == "" {
		t.Fatalf("first preflight: %+v", first)
	}
	if second := route(); second.Status != 500 || second.Thrown != "Preflight failed" {
		t.Fatalf("rate-limited route: %+v, want the seed's throw (500)", second)
	}
	req, _ := http.NewRequest("POST", p.url+"/v1/chat/preflight", strings.NewReader(`{"message":"again?"}`))
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || body.Error.Code != "rate_limit_exceeded" {
		t.Fatalf("preflight over the rate limit: %d %q %+v", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	var me struct {
		Budget struct {
			Reserved int64 `json:"tokens_reserved"`
		} `json:"budget"`
	}
	getJSON(t, p.url+"/v1/me", p.key, &me)
	var list struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	getJSON(t, p.url+"/v1/sessions", p.key, &list)
	if me.Budget.Reserved != first.Preflight.EstimatedTokens || len(list.Sessions) != 1 {
		t.Fatalf("after refused preflights: %d held (want the first's %d), %d sessions (want 1)",
			me.Budget.Reserved, first.Preflight.EstimatedTokens, len(list.Sessions))
	}
}
