package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSeed001Client plays the rideshare coach's client calls, under Node,
// against the real binary serving examples/rideshare: validation, the
// notes panel, and a chat whose action tags run and stay out of the text.
func TestSeed001Client(t *testing.T) {
	node := needNode(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	dbPath, appDB := buildRideshareDB(t)
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "RIDESHARE_DB=" + dbPath},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", rideshareDir, "--demo", "--rate-limit", "3/1h")
	fake.Enqueue(anthropictest.Text("Noted, mornings it is. Deep Ellum on Fridays is a good call.\n"+
		`[SAVE_NOTE: {"note_type": "preference", "category": "timing", "title": "Prefers mornings", "content": "Likes 5-10am", "importance": 75, "market_slug": "dallas-tx"}]`+"\n"+
		`[ZONE_INTEL: {"zone_type": "honey_hole", "zone_name": "Deep Ellum Bar District", "market_slug": "dallas-tx", "reason": "Fri-Sat 10pm-2am"}]`+"\n"+
		`[SYSTEM_NOTE: {"type": "feature_request", "category": "nope", "title": "x", "description": "y"}]`, 9))
	raw, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed001-client.mjs"), p.url, p.key).Output()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, raw)
	}
	var out struct {
		ValidateOK        map[string]any   `json:"validate_ok"`
		ValidateBad       map[string]any   `json:"validate_bad"`
		ValidateZone      map[string]any   `json:"validate_zone"`
		ChatText          string           `json:"chat_text"`
		ChatResults       []map[string]any `json:"chat_results"`
		NotesLoaded       []string         `json:"notes_loaded"`
		AfterFailedDelete int              `json:"after_failed_delete"`
		PinStatus         int              `json:"pin_status"`
		AfterDelete       int              `json:"after_delete"`
		Stats             map[string]any
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	// The document's response shapes.
	if out.ValidateOK["ok"] != true || out.ValidateOK["action_type"] != "SAVE_NOTE" || out.ValidateOK["validated"] == nil {
		t.Errorf("validate ok: %v", out.ValidateOK)
	}
	details, _ := out.ValidateBad["details"].([]any)
	if out.ValidateBad["ok"] != false || out.ValidateBad["error"] != "VALIDATION_ERROR" || len(details) == 0 ||
		!strings.Contains(string(raw), `"field":"title"`) {
		t.Errorf("validate bad: %v", out.ValidateBad)
	}
	if out.ValidateZone["ok"] != false || !strings.Contains(string(raw), `"field":"market_slug"`) {
		t.Errorf("market slug not checked: %v", out.ValidateZone)
	}
	// The tags ran and stayed out of what the driver reads.
	if strings.Contains(out.ChatText, "[SAVE_NOTE") || strings.Contains(out.ChatText, "ZONE_INTEL") || !strings.Contains(out.ChatText, "Deep Ellum on Fridays") {
		t.Errorf("chat text %q", out.ChatText)
	}
	if len(out.ChatResults) != 3 || out.ChatResults[0]["is_error"] == true || out.ChatResults[1]["is_error"] == true || out.ChatResults[2]["is_error"] != true {
		t.Errorf("action results %v", out.ChatResults)
	}
	// ZONE_INTEL wrote the app's database, as the demo driver.
	var zoneName, market, by string
	appDB.QueryRow(`SELECT zone_name, market_slug, reported_by FROM zone_intelligence WHERE zone_type = 'honey_hole'`).Scan(&zoneName, &market, &by)
	if zoneName != "Deep Ellum Bar District" || market != "dallas-tx" || by != "demo" {
		t.Errorf("the app's zone_intelligence got %q %q by %q", zoneName, market, by)
	}
	// The notes panel: the tag's note, a failed delete rolled back, pin, delete, stats.
	if len(out.NotesLoaded) != 1 || out.NotesLoaded[0] != "Prefers mornings" || out.AfterFailedDelete != 1 || out.PinStatus != 200 || out.AfterDelete != 0 {
		t.Errorf("notes panel: %s", raw)
	}
	if out.Stats == nil {
		t.Errorf("stats: %s", raw)
	}

	type chatRun struct {
		Status int    `json:"status"`
		Text   string `json:"text"`
		Events []struct {
			Event string         `json:"event"`
			Data  map[string]any `json:"data"`
		} `json:"events"`
	}
	chat := func(msg string) chatRun {
		raw, err := exec.Command(node, filepath.Join("testdata", "seeds", "seed001-client.mjs"), p.url, p.key, msg).Output()
		var r chatRun
		if err != nil || json.Unmarshal(raw, &r) != nil {
			t.Fatalf("node: %v\n%s", err, raw)
		}
		return r
	}
	last := func(r chatRun) string { return r.Events[len(r.Events)-1].Event }

	t.Log("a limit stop: the round limit")
	for range 7 {
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("", "list_notes", `{}`)))
	}
	r := chat("dig through my notes")
	if last(r) != "message_end" || r.Events[len(r.Events)-1].Data["stop_reason"] != "max_rounds" {
		t.Errorf("round limit: %+v", r)
	}
	t.Log("a mid-stream upstream error: the stream ends at the error")
	fake.Enqueue(anthropictest.Text("Surge is building downtown and", 4).ErrorAfter(4, "api_error", "boom"))
	r = chat("where now?")
	if last(r) != "error" || r.Text == "" {
		t.Errorf("mid-stream: %+v", r)
	}
	t.Log("a pre-stream error: the rate limit (3 turns an hour)")
	r = chat("and now?")
	if r.Status != 429 || len(r.Events) != 1 || r.Events[0].Data["type"] != "rate_limit_exceeded" {
		t.Errorf("rate limit: %+v", r)
	}
}
