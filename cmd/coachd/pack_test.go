package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
	"github.com/coachd/coachd/sqlstore"
)

var sageDir = filepath.Join("..", "..", "examples", "sage")

func TestPackCommand(t *testing.T) {
	t.Run("ValidateSage", func(t *testing.T) {
		out := &syncBuffer{}
		if err := run(context.Background(), []string{"coachd", "pack", "validate", sageDir}, getenvFrom(nil), out, out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if !strings.Contains(out.String(), "ok (1 agents, 10 skills") {
			t.Fatalf("output %s", out)
		}
	})
	t.Run("ValidateExamples", func(t *testing.T) {
		// One pack per seed; each validates with no environment set (webhook
		// URLs default to placeholders) but the rideshare database.
		dbPath, _ := buildRideshareDB(t)
		for name, want := range map[string]string{
			"rlcoach": "ok (1 agents, 0 skills, 3 pack tools)", "rideshare": "ok (1 agents, 0 skills, 8 pack tools)",
			"sage": "ok (1 agents, 10 skills", "autobuild": "ok (2 agents", "fitness": "ok (1 agents, 0 skills, 4 pack tools)",
		} {
			out := &syncBuffer{}
			dir := filepath.Join("..", "..", "examples", name)
			env := getenvFrom(map[string]string{"RIDESHARE_DB": dbPath})
			if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, env, out, out); err != nil || !strings.Contains(out.String(), want) {
				t.Errorf("%s: %v\n%s", name, err, out)
			}
		}
	})
	t.Run("ErrDataSource", func(t *testing.T) {
		// The rideshare pack without its database: the data file's line.
		out := &syncBuffer{}
		env := getenvFrom(map[string]string{"RIDESHARE_DB": filepath.Join(t.TempDir(), "none.db")})
		err := run(context.Background(), []string{"coachd", "pack", "validate", rideshareDir}, env, out, out)
		if err == nil || !strings.Contains(out.String(), "data/rideshare.yaml:7: dsn: cannot open none.db read-only") {
			t.Errorf("%v\n%s", err, out)
		}
	})
	t.Run("ErrDataSourceOneCause", func(t *testing.T) {
		// The rideshare pack before its database is built: the one cause,
		// the path tried, and no "unknown tool" for the data source's tools.
		out := &syncBuffer{}
		err := run(context.Background(), []string{"coachd", "pack", "validate", rideshareDir}, getenvFrom(nil), out, out)
		got := out.String()
		if err == nil || strings.Contains(got, "unknown tool") || !strings.Contains(err.Error(), "1 problem(s)") ||
			!strings.Contains(got, "data/rideshare.yaml:7: dsn: cannot open rideshare.db read-only") ||
			!strings.Contains(got, filepath.Join("examples", "rideshare", "data", "rideshare.db")) ||
			!strings.Contains(got, "relative to the data file's directory") {
			t.Errorf("%v\n%s", err, got)
		}
	})
	t.Run("List", func(t *testing.T) {
		out := &syncBuffer{}
		if err := run(context.Background(), []string{"coachd", "pack", "list", sageDir}, getenvFrom(nil), out, out); err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"sage (default)", "open-day", "weekly-checkin", "SKILLS"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("list lacks %q:\n%s", want, out)
			}
		}
	})
	t.Run("ErrProblems", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.MkdirAll(filepath.Join(dir, "tools"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\ntools: [ghost_tool]\n---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "tools", "hook.yaml"), []byte("name: hook\ndescription: d\nurl: https://example.com/${HOOK_TOKEN}\n"), 0o644)
		out := &syncBuffer{}
		err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), out, out)
		if err == nil || !strings.Contains(out.String(), "agents/a.md:4: unknown tool \"ghost_tool\"") ||
			!strings.Contains(out.String(), "tools/hook.yaml:3: environment variable HOOK_TOKEN is not set") {
			t.Fatalf("err %v\n%s", err, out)
		}
	})
	t.Run("NoteVocabulary", func(t *testing.T) {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\n---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "notes.yaml"), []byte("types: [goal, Bad Name]\ncolours: [red]\n"), 0o644)
		out := &syncBuffer{}
		err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), out, out)
		if err == nil || !strings.Contains(out.String(), "notes.yaml") {
			t.Fatalf("err %v\n%s", err, out)
		}
	})
	t.Run("WebhookAllow", func(t *testing.T) {
		// Issue 20 finding 1: an internal address is a load problem unless
		// the operator allows it.
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, "agents"), 0o755)
		os.MkdirAll(filepath.Join(dir, "tools"), 0o755)
		os.WriteFile(filepath.Join(dir, "agents", "a.md"), []byte("---\nname: a\ndescription: d\ntools: [hook]\n---\nhi\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "tools", "hook.yaml"), []byte("name: hook\ndescription: d\nurl: http://169.254.169.254/latest\n"), 0o644)
		out := &syncBuffer{}
		err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, getenvFrom(nil), out, out)
		if err == nil || !strings.Contains(out.String(), "tools/hook.yaml:3: url: 169.254.169.254 is a link-local address") {
			t.Fatalf("err %v\n%s", err, out)
		}
		out = &syncBuffer{}
		env := getenvFrom(map[string]string{"COACHD_WEBHOOK_ALLOW": "169.254.169.254"})
		if err := run(context.Background(), []string{"coachd", "pack", "validate", dir}, env, out, out); err != nil {
			t.Fatalf("allowed address still refused: %v\n%s", err, out)
		}
	})
}

// sageStream posts one turn to /v1/chat/stream?protocol=sage and returns
// the decoded data lines (without [DONE], which it checks).
func sageStream(t *testing.T, url, key string, body any) ([]map[string]json.RawMessage, string) {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", url+"/v1/chat/stream?protocol=sage", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var e bytes.Buffer
		e.ReadFrom(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, e.String())
	}
	var out []map[string]json.RawMessage
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad data line %q", line)
		}
		out = append(out, m)
	}
	if !done {
		t.Fatal("stream did not end with [DONE]")
	}
	return out, resp.Header.Get("X-Coachd-Session-Id")
}

func has(events []map[string]json.RawMessage, key string) json.RawMessage {
	for _, e := range events {
		if v, ok := e[key]; ok {
			return v
		}
	}
	return nil
}

func text(events []map[string]json.RawMessage) string {
	var sb strings.Builder
	for _, e := range events {
		if v, ok := e["text"]; ok {
			var s string
			json.Unmarshal(v, &s)
			sb.WriteString(s)
		}
	}
	return sb.String()
}

// TestSagePackEndToEnd drives the example pack through the real binary:
// coachd serve --pack examples/sage against the fake Anthropic API.
func TestSagePackEndToEnd(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	dbPath := filepath.Join(t.TempDir(), "c.db")
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0",
		"COACHD_PACK": sageDir, "COACHD_RATE_LIMIT": "off"}
	p := MustServe(t, env, "--db", dbPath, "--admin-key", "admin-key-0123456789")
	ctx := context.Background()
	budget := int64(10_000_000)
	u, key, err := client.New(p.url, "admin-key-0123456789", nil).CreateUser(ctx, "ada", &budget)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(ctx, dbPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	// The scripted coach. expire, when set, runs before the reply to the
	// request with that index (a session expiring mid-turn).
	var mu sync.Mutex
	var expire func()
	replies := []anthropictest.Reply{
		// Turn 1: a day plan is allowed, the overview is not (default mode).
		anthropictest.Blocks(anthropictest.TextBlock("Good morning! Saving your plan.", 5),
			anthropictest.ToolUse("t_plan", "save_file", `{"file_type":"day-plan","file_name":"2026-03-02","content":"Intention: rest","attributes":{"energy":"low"}}`),
			anthropictest.ToolUse("t_over", "save_file", `{"file_type":"overview","content":"# My map"}`)),
		anthropictest.Blocks(anthropictest.TextBlock("Plan saved. Want to map your life?", 5),
			anthropictest.ToolUse("t_opt", "show_options", `{"prompt":"Next?","options":["Start life mapping","Later"]}`)),
		// Turn 2: the answer resumes; enter the arc, then a pulse check.
		anthropictest.Blocks(anthropictest.ToolUse("t_arc", "enter_structured_arc", `{"arc":"life_mapping"}`)),
		anthropictest.Blocks(anthropictest.TextBlock("Rate your domains.", 5),
			anthropictest.ToolUse("t_pulse", "show_pulse_check", `{"context":"How do your domains feel?","domains":["health","career"]}`)),
		// Turn 3: ratings in; the overview is now writable; finish the arc.
		anthropictest.Blocks(anthropictest.ToolUse("t_over2", "save_file", `{"file_type":"overview","content":"# My map","attributes":{"status":"okay"}}`),
			anthropictest.ToolUse("t_arcdone", "complete_session", `{"type":"arc"}`)),
		anthropictest.Text("Your map is saved.", 5),
		// Turn 4: complete the session.
		anthropictest.Blocks(anthropictest.TextBlock("Goodbye!", 5), anthropictest.ToolUse("t_done", "complete_session", `{"type":"session","summary":"mapped"}`)),
		anthropictest.Text("See you tomorrow.", 5),
		// Turn 5 (new session, expired mid-turn): completion is refused.
		anthropictest.Blocks(anthropictest.ToolUse("t_exp", "complete_session", `{"type":"session"}`)),
		anthropictest.Text("That session expired; let's start fresh.", 5),
	}
	n := 0
	fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		mu.Lock()
		defer mu.Unlock()
		if n == 8 && expire != nil {
			expire()
		}
		r := replies[min(n, len(replies)-1)]
		n++
		return r
	})

	ev, sid := sageStream(t, p.url, key, map[string]any{"message": "Good morning"})
	if !strings.Contains(text(ev), "Good morning! Saving your plan.") || has(ev, "toolCall") == nil || has(ev, "roundBoundary") == nil {
		t.Fatalf("turn 1 events %v", ev)
	}
	var opts struct {
		Options   []string `json:"options"`
		ToolUseID string   `json:"toolUseId"`
	}
	if err := json.Unmarshal(has(ev, "showOptions"), &opts); err != nil || opts.ToolUseID != "t_opt" || len(opts.Options) != 2 {
		t.Fatalf("showOptions %s", has(ev, "showOptions"))
	}
	if _, err := db.FindFile(ctx, u.ID, "day-plan", "2026-03-02"); err != nil {
		t.Fatalf("day plan not saved: %v", err)
	}
	if _, err := db.FindFile(ctx, u.ID, "overview", "overview"); coachd.ErrorCode(err) != coachd.ENOTFOUND {
		t.Fatalf("forbidden overview write went through: %v", err)
	}
	refused := fake.Requests()[1].ToolResults()
	if len(refused) != 2 || !refused[1].IsError || !strings.Contains(refused[1].ResultText(), "may not be written in default mode") {
		t.Fatalf("refusal sent to the model: %+v", refused)
	}

	ev, _ = sageStream(t, p.url, key, map[string]any{"session_id": sid, "tool_result": map[string]any{"tool_use_id": "t_opt", "content": "Start life mapping"}})
	if string(has(ev, "modeChange")) != `"life_mapping"` {
		t.Fatalf("modeChange %v", ev)
	}
	var pulse struct {
		Context   map[string]any `json:"context"`
		ToolUseID string         `json:"toolUseId"`
	}
	if err := json.Unmarshal(has(ev, "showPulseCheck"), &pulse); err != nil || pulse.ToolUseID != "t_pulse" || pulse.Context["context"] == nil {
		t.Fatalf("showPulseCheck %s", has(ev, "showPulseCheck"))
	}
	if got := fake.Requests()[2].ToolResults(); len(got) != 1 || got[0].ResultText() != "Start life mapping" {
		t.Fatalf("option answer %+v", got)
	}

	// An answer outside the pulse check's result schema is refused before
	// anything runs.
	bad, _ := json.Marshal(map[string]any{"session_id": sid, "tool_result": map[string]any{"tool_use_id": "t_pulse", "content": map[string]any{"ratings": []any{map[string]any{"domain": "health", "rating": 9}}}}})
	req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream?protocol=sage", bytes.NewReader(bad))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 400 {
		t.Fatalf("bad ratings: %v %v", resp.StatusCode, err)
	}
	resp.Body.Close()

	ratings := map[string]any{"ratings": []any{map[string]any{"domain": "health", "rating": 2}, map[string]any{"domain": "career", "rating": 4}}}
	ev, _ = sageStream(t, p.url, key, map[string]any{"session_id": sid, "tool_result": map[string]any{"tool_use_id": "t_pulse", "content": ratings}})
	if string(has(ev, "arcCompleted")) != `"life_mapping"` || !strings.Contains(text(ev), "Your map is saved.") {
		t.Fatalf("turn 3 events %v", ev)
	}
	if got := fake.Requests()[4].ToolResults(); len(got) != 1 || !strings.Contains(got[0].ResultText(), `"rating":2`) {
		t.Fatalf("ratings sent %+v", got)
	}
	if f, err := db.FindFile(ctx, u.ID, "overview", "overview"); err != nil || f.Attributes.Status != "okay" {
		t.Fatalf("overview in the arc: %+v %v", f, err)
	}

	ev, _ = sageStream(t, p.url, key, map[string]any{"session_id": sid, "message": "that's all for today"})
	if string(has(ev, "sessionCompleted")) != "true" {
		t.Fatalf("turn 4 events %v", ev)
	}
	if s, _ := db.FindSession(ctx, u.ID, sid); s.Status != coachd.SessionCompleted {
		t.Fatalf("session %+v", s)
	}

	mu.Lock()
	var sid2 string
	expire = func() {
		st := coachd.SessionExpired
		list, _, _ := db.ListSessions(ctx, u.ID, coachd.Page{Limit: 1})
		sid2 = list[0].ID
		if _, err := db.UpdateSession(ctx, u.ID, sid2, coachd.SessionUpdate{Status: &st}); err != nil {
			t.Errorf("expire: %v", err)
		}
	}
	mu.Unlock()
	ev, _ = sageStream(t, p.url, key, map[string]any{"message": "bye for real"})
	if has(ev, "sessionCompleted") != nil || !strings.Contains(text(ev), "expired") {
		t.Fatalf("turn 5 events %v", ev)
	}
	got := fake.Requests()[9].ToolResults()
	// Seed 002's executeCompleteSession answer (its lines 665-671), not an error.
	if len(got) != 1 || got[0].IsError || got[0].ResultText() != `{"success":false,"error":"session_expired","message":"Session expired before completion. Starting fresh next time."}` {
		t.Fatalf("expired completion result %+v", got)
	}
	if s, _ := db.FindSession(ctx, u.ID, sid2); s.Status != coachd.SessionExpired {
		t.Fatalf("expired session became %s", s.Status)
	}
}

// TestServeRefusesNameKeyedDataWithJWT: the rideshare pack keys its rows
// by the coachd user's name; with an identity provider a token's user
// chooses that name, so serve refuses the pair at start, naming the fix.
func TestServeRefusesNameKeyedDataWithJWT(t *testing.T) {
	dbPath, _ := buildRideshareDB(t)
	out := &syncBuffer{}
	args := []string{"coachd", "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(t.TempDir(), "c.db"), "--pack", rideshareDir,
		"--jwt-jwks-url", "http://127.0.0.1:1/jwks.json", "--jwt-issuer", "https://id.example", "--jwt-audience", "coachd"}
	// Were it to start, it would serve until the deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := run(ctx, args, getenvFrom(map[string]string{"RIDESHARE_DB": dbPath}), out, out)
	if err != errUsage || !strings.Contains(out.String(), "user_key: subject") {
		t.Fatalf("serve = %v, want a usage error naming user_key: subject\n%s", err, out)
	}
}
