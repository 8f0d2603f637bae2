package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// aspRun is what seed 000's reducer ended with, and the events it read.
type aspRun struct {
	Status int `json:"status"`
	State  struct {
		Messages   []struct{ Role, Content string } `json:"messages"`
		ToolStatus *string                          `json:"toolStatus"`
		Error      *string                          `json:"error"`
	} `json:"state"`
	Events []map[string]any `json:"events"`
	Thrown string           `json:"thrown"`
}

func (r aspRun) types() []string {
	var out []string
	for _, ev := range r.Events {
		out = append(out, fmt.Sprint(ev["type"]))
	}
	return out
}

func rlcoachApp(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch filepath.Base(r.URL.Path) {
		case "benchmarks":
			fmt.Fprintf(w, `{"rank":%q,"playlist":%q,"boost_per_minute":380,"time_supersonic_pct":14.5}`, r.URL.Query().Get("rank"), r.URL.Query().Get("playlist"))
		default:
			http.Error(w, "replay store unavailable", http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSeed000Client plays seed 000's ASP reducer and its backend bridge,
// under Node, against the real binary serving examples/rlcoach.
func TestSeed000Client(t *testing.T) {
	node := needNode(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	app := rlcoachApp(t)
	const admin = "seed-admin-key-0123456789"
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "RLCOACH_API_URL=" + app.URL},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", filepath.Join("..", "..", "examples", "rlcoach"), "--demo",
		"--webhook-allow", "127.0.0.1/32", "--rate-limit", "off", "--admin-key", admin)
	stream := func(msg string) aspRun {
		out, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed000-client.mjs"), "stream", p.url, p.key, msg).Output()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		var r aspRun
		if err := json.Unmarshal(out, &r); err != nil || r.Thrown != "" {
			t.Fatalf("node output %s: %v", out, err)
		}
		return r
	}
	last := func(r aspRun) string { ts := r.types(); return ts[len(ts)-1] }

	t.Log("happy path")
	fake.Enqueue(anthropictest.Text("Watch your boost: you starve in rotation.", 8))
	r := stream("how do I rank up?")
	if r.Status != 200 || r.State.Error != nil || len(r.State.Messages) != 1 || r.State.Messages[0].Content != "Watch your boost: you starve in rotation." ||
		r.types()[0] != "ack" || last(r) != "message_stop" {
		t.Fatalf("happy: %+v", r)
	}

	t.Log("a tool result is the result object")
	fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_b", "get_rank_benchmarks", `{"rank":"diamond","playlist":"doubles"}`)),
		anthropictest.Text("Diamond players use 380 boost a minute.", 6))
	r = stream("what do diamonds do?")
	var result map[string]any
	for _, ev := range r.Events {
		if ev["type"] == "tool_result" {
			result, _ = ev["content"].(map[string]any)
		}
	}
	if result["rank"] != "diamond" || result["boost_per_minute"] != 380.0 || r.State.ToolStatus != nil || r.State.Error != nil {
		t.Fatalf("tool: %+v", r)
	}

	t.Log("a tool error")
	fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_r", "get_replay_summary", `{"replay_id":"r1"}`)),
		anthropictest.Text("I cannot open that replay right now.", 6))
	r = stream("look at my last replay")
	var failed map[string]any
	for _, ev := range r.Events {
		if ev["type"] == "tool_result" {
			failed = ev
		}
	}
	if failed["is_error"] != true || !strings.Contains(fmt.Sprint(failed["content"]), "HTTP 502") || last(r) != "message_stop" {
		t.Fatalf("tool error: %+v", r)
	}

	t.Log("the round limit is the seed's error, then the stop")
	for i := range 11 {
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse(fmt.Sprintf("toolu_l%d", i), "get_rank_benchmarks", `{"rank":"gold","playlist":"duel"}`)))
	}
	r = stream("keep digging")
	ts := r.types()
	if r.State.Error == nil || *r.State.Error != "Tool loop exceeded MAX_STEPS" || ts[len(ts)-2] != "error" || last(r) != "message_stop" {
		t.Fatalf("round limit: %v %+v", ts, r.State)
	}

	t.Log("a mid-stream upstream error")
	fake.Enqueue(anthropictest.Text("A long answer that will break", 4).ErrorAfter(4, "overloaded_error", "Overloaded"))
	r = stream("more")
	if r.State.Error == nil || !strings.Contains(r.types()[len(r.types())-2]+last(r), "error") {
		t.Fatalf("mid-stream: %v %+v", r.types(), r.State)
	}

	t.Log("the own-loop API with the seed's bodies")
	out, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed000-client.mjs"), "ownloop", p.url, p.key,
		"compare me with diamond", "get_rank_benchmarks", `{"rank":"diamond","playlist":"doubles"}`).Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var own struct {
		Thrown    string `json:"thrown"`
		Preflight struct {
			SessionID       string `json:"session_id"`
			ReservationID   string `json:"reservation_id"`
			EstimatedTokens int64  `json:"estimated_tokens"`
			SystemMessage   string `json:"system_message"`
		} `json:"preflight"`
		ToolNames   []string         `json:"tool_names"`
		ToolResult  map[string]any   `json:"tool_result"`
		RecordRound map[string]any   `json:"record_round"`
		RecordFinal map[string]any   `json:"record_final"`
		History     []map[string]any `json:"second_history"`
		Abort       map[string]any   `json:"abort"`
	}
	if err := json.Unmarshal(out, &own); err != nil || own.Thrown != "" {
		t.Fatalf("own loop: %s %v", out, err)
	}
	hist, _ := json.Marshal(own.History)
	if own.Preflight.ReservationID == "" || own.Preflight.SystemMessage == "" || !strings.Contains(strings.Join(own.ToolNames, ","), "get_rank_benchmarks") ||
		own.ToolResult["rank"] != "diamond" || own.RecordRound["state"] != "active" || own.RecordFinal["tokens_charged"] != 450.0 ||
		!strings.Contains(string(hist), `"tool_use"`) || own.Abort["aborted"] != true {
		t.Fatalf("own loop: %s", out)
	}
	var me struct {
		Budget struct {
			Used     int64 `json:"tokens_used"`
			Reserved int64 `json:"tokens_reserved"`
		} `json:"budget"`
	}
	getJSON(t, p.url+"/v1/me", p.key, &me)
	if me.Budget.Reserved != 0 {
		t.Fatalf("reservations leaked: %+v", me.Budget)
	}

	t.Log("a pre-stream error: no budget left")
	var user struct{ ID string }
	getJSON(t, p.url+"/v1/me", p.key, &user)
	req, _ := http.NewRequest("PATCH", p.url+"/v1/users/"+user.ID, strings.NewReader(`{"token_budget":1}`))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("patch budget: %v %v", resp, err)
	}
	r = stream("hello?")
	if r.Status != 402 || r.State.Error == nil || !strings.Contains(*r.State.Error, "budget") || len(r.Events) != 1 || r.Events[0]["code"] != "budget_exhausted" {
		t.Fatalf("budget: %+v", r)
	}

	t.Log("the own loop's route with no budget left: the seed's own 402, no hold, no session")
	var before struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	getJSON(t, p.url+"/v1/sessions", p.key, &before)
	for _, sid := range []string{"", own.Preflight.SessionID} {
		out, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed000-client.mjs"), "route", p.url, p.key, "hello?", sid).Output()
		if err != nil {
			t.Fatalf("node: %v\n%s", err, out)
		}
		var route struct {
			Status    int               `json:"status"`
			Body      map[string]string `json:"body"`
			Thrown    string            `json:"thrown"`
			Preflight struct {
				SessionID     string `json:"session_id"`
				ReservationID string `json:"reservation_id"`
				Error         struct {
					Code string `json:"code"`
				} `json:"error"`
			} `json:"preflight"`
		}
		if err := json.Unmarshal(out, &route); err != nil || route.Status != 402 || route.Body["error"] != "Budget exhausted" ||
			route.Preflight.SessionID != sid || route.Preflight.ReservationID != "" || route.Preflight.Error.Code != "budget_exhausted" {
			t.Fatalf("route with no budget (session %q): %s %v", sid, out, err)
		}
	}
	var after struct {
		Sessions []json.RawMessage `json:"sessions"`
	}
	getJSON(t, p.url+"/v1/sessions", p.key, &after)
	getJSON(t, p.url+"/v1/me", p.key, &me)
	if len(after.Sessions) != len(before.Sessions) || me.Budget.Reserved != 0 {
		t.Fatalf("refused preflights left %d sessions (had %d), %d tokens held", len(after.Sessions), len(before.Sessions), me.Budget.Reserved)
	}
}

func getJSON(t *testing.T, url, key string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s: %s", url, b)
	}
}
