package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/sqlstore"
	"github.com/coachd/coachd/tools"
)

func storeEnv(t *testing.T) coachd.ToolEnv {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, filepath.Join(t.TempDir(), "c.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	u := &coachd.User{Name: "ada"}
	if err := db.CreateUser(ctx, u, "h"); err != nil {
		t.Fatal(err)
	}
	s := &coachd.Session{UserID: u.ID, Agent: "default"}
	if err := db.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	return coachd.ToolEnv{User: u, Session: s, Store: db, Emit: func(coachd.Event) {}}
}

func exec(t *testing.T, tool coachd.Tool, env coachd.ToolEnv, input string) coachd.ToolResult {
	t.Helper()
	res, err := tool.Execute(context.Background(), coachd.ToolCall{ID: "c", Name: tool.Definition().Name, Input: json.RawMessage(input)}, env)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestFileTools(t *testing.T) {
	env := storeEnv(t)
	save := tools.SaveFile{}
	if r := exec(t, save, env, `{"file_type":"day-plan","file_name":"2026-03-02","content":"Rest","attributes":{"energy":"low"}}`); r.IsError || !strings.Contains(r.Content, `"bytes":4,"path":"day-plan/2026-03-02"`) {
		t.Fatalf("save %+v", r)
	}
	for _, bad := range []string{`{"file_type":"day-plan","file_name":"../x","content":"x"}`, `{"file_type":"nope","content":"x"}`,
		`{"file_type":"day-plan","file_name":"a\u0001b","content":"x"}`} {
		if r := exec(t, save, env, bad); !r.IsError {
			t.Errorf("%s accepted: %+v", bad, r)
		}
	}
	if r := exec(t, tools.ReadFile{}, env, `{"file_type":"day-plan","file_name":"2026-03-02"}`); r.IsError || !strings.Contains(r.Content, `"content":"Rest"`) {
		t.Fatalf("read %+v", r)
	}
	if r := exec(t, tools.ReadFile{}, env, `{"file_type":"overview"}`); !r.IsError {
		t.Fatalf("missing file read %+v", r)
	}
	if r := exec(t, tools.ListFiles{}, env, `{}`); !strings.Contains(r.Content, `"count":1`) {
		t.Fatalf("list %+v", r)
	}
	for _, tool := range tools.Builtins() {
		d := tool.Definition()
		if d.Category == "" || d.Description == "" || !json.Valid(d.InputSchema) {
			t.Errorf("%s: incomplete definition", d.Name)
		}
	}
}

func TestNoteEditTools(t *testing.T) {
	env := storeEnv(t)
	r := exec(t, tools.SaveNote{}, env, `{"note_type":"tip","title":"T","content":"C"}`)
	var saved struct {
		ID string `json:"note_id"`
	}
	json.Unmarshal([]byte(r.Content), &saved)
	if r := exec(t, tools.UpdateNote{}, env, `{"note_id":"`+saved.ID+`","title":"New"}`); r.IsError || !strings.Contains(r.Content, `"title":"New"`) {
		t.Fatalf("update %+v", r)
	}
	if r := exec(t, tools.PinNote{}, env, `{"note_id":"`+saved.ID+`"}`); r.IsError || !strings.Contains(r.Content, `"is_pinned":true`) {
		t.Fatalf("pin %+v", r)
	}
	if r := exec(t, tools.PinNote{}, env, `{"note_id":"note_nope"}`); !r.IsError {
		t.Fatalf("bad id %+v", r)
	}
}

func TestEnterArcAndComplete(t *testing.T) {
	env := storeEnv(t)
	if r := exec(t, tools.EnterArc{}, env, `{"arc":"life_mapping"}`); r.IsError {
		t.Fatalf("enter %+v", r)
	}
	s, _ := env.Store.FindSession(context.Background(), env.User.ID, env.Session.ID)
	if s.Mode != "life_mapping" {
		t.Fatalf("mode %q", s.Mode)
	}
	st := coachd.SessionExpired
	env.Store.UpdateSession(context.Background(), env.User.ID, env.Session.ID, coachd.SessionUpdate{Status: &st})
	// Seed 002's executeCompleteSession answers an expired session so.
	if r := exec(t, tools.CompleteSession{}, env, `{"type":"session"}`); r.IsError || r.Content != `{"success":false,"error":"session_expired","message":"Session expired before completion. Starting fresh next time."}` {
		t.Fatalf("complete expired %+v", r)
	}
	if r := exec(t, tools.EnterArc{}, env, `{"arc":"weekly_checkin"}`); !r.IsError {
		t.Fatalf("enter on expired %+v", r)
	}
}

// Seed 002's save_file names its attributes updated_rating (text) and
// mood_signal; both are accepted, through the toolset's schema too.
func TestSaveFileSeedAttributes(t *testing.T) {
	env := storeEnv(t)
	ts, err := agent.NewToolset(tools.SaveFile{})
	if err != nil {
		t.Fatal(err)
	}
	in := `{"file_type":"domain","file_name":"health","content":"Sleep is off.","attributes":{"status":"needs_attention","updated_rating":"4","mood_signal":"tired"}}`
	if err := ts.ValidateInput("save_file", json.RawMessage(in)); err != nil {
		t.Fatalf("schema refuses the seed's attributes: %v", err)
	}
	if r := exec(t, tools.SaveFile{}, env, in); r.IsError {
		t.Fatalf("save %+v", r)
	}
	f, err := env.Store.FindFile(context.Background(), env.User.ID, "domain", "health")
	if err != nil || f.Attributes.Rating != 4 || f.Attributes.Mood != "tired" || f.Attributes.Status != "needs_attention" {
		t.Fatalf("stored %+v %v", f, err)
	}
	// The seed's updated_rating is any string: one that is not a plain 1
	// to 10 is kept as text, without a rating.
	for _, c := range []struct {
		in     string
		rating int
		text   string
	}{{"2/5", 0, "2/5"}, {"great", 0, "great"}, {"11", 0, "11"}, {"7 (up from 5)", 0, "7 (up from 5)"}, {" 8 ", 8, ""}, {"7/10", 7, ""}} {
		in := `{"file_type":"domain","file_name":"work","content":"x","attributes":{"updated_rating":` + strconv.Quote(c.in) + `}}`
		if err := ts.ValidateInput("save_file", json.RawMessage(in)); err != nil {
			t.Fatalf("schema refuses updated_rating %q: %v", c.in, err)
		}
		if r := exec(t, tools.SaveFile{}, env, in); r.IsError {
			t.Fatalf("updated_rating %q: %+v", c.in, r)
		}
		f, err := env.Store.FindFile(context.Background(), env.User.ID, "domain", "work")
		if err != nil || f.Attributes.Rating != c.rating || f.Attributes.RatingText != c.text {
			t.Fatalf("updated_rating %q stored as %+v, %v", c.in, f.Attributes, err)
		}
	}
	long := `{"file_type":"domain","file_name":"work","content":"x","attributes":{"updated_rating":"` + strings.Repeat("x", 51) + `"}}`
	if ts.ValidateInput("save_file", json.RawMessage(long)) == nil {
		t.Fatal("schema takes a 51-character updated_rating")
	}
	if r := exec(t, tools.SaveFile{}, env, long); !r.IsError || !strings.Contains(r.Content, "updated_rating") {
		t.Fatalf("long rating: %+v", r)
	}
}

// checkinPolicy is a pack whose agents check in every 7 days.
type checkinPolicy struct{}

func (checkinPolicy) WritableTypes(string, string) []string           { return nil }
func (checkinPolicy) Arcs(string) []string                            { return nil }
func (checkinPolicy) SkillText(string, string) (string, error)        { return "", nil }
func (checkinPolicy) Checkin(string) (fileType string, everyDays int) { return "check-in", 7 }
func (checkinPolicy) NoteVocabulary() coachd.NoteVocabulary           { return coachd.DefaultNoteVocabulary }

// Seed 002: completing a session says when the next check-in is due.
func TestCompleteSessionNextCheckin(t *testing.T) {
	env := storeEnv(t)
	if r := exec(t, tools.SaveFile{}, env, `{"file_type":"check-in","file_name":"2026-03-01","content":"Good week"}`); r.IsError {
		t.Fatal(r.Content)
	}
	f, _ := env.Store.FindFile(context.Background(), env.User.ID, "check-in", "2026-03-01")
	r := exec(t, tools.CompleteSession{Policy: checkinPolicy{}}, env, `{"type":"session"}`)
	want := f.UpdatedAt.UTC().AddDate(0, 0, 7).Format("2006-01-02")
	if r.IsError || !strings.Contains(r.Content, `"next_checkin_due":"`+want+`"`) {
		t.Fatalf("complete: %+v, want next_checkin_due %s", r, want)
	}
	other := storeEnv(t)
	if r := exec(t, tools.CompleteSession{}, other, `{"type":"session"}`); r.IsError || strings.Contains(r.Content, "next_checkin_due") {
		t.Fatalf("no cadence: %+v", r)
	}
}

// Seed 002: saving the daily log folds the captures waiting for it.
func TestDailyLogFoldsCaptures(t *testing.T) {
	env := storeEnv(t)
	for _, name := range []string{"c1", "c2"} {
		if r := exec(t, tools.SaveFile{}, env, `{"file_type":"capture","file_name":"`+name+`","content":"call mum"}`); r.IsError {
			t.Fatal(r.Content)
		}
	}
	r := exec(t, tools.SaveFile{}, env, `{"file_type":"daily-log","file_name":"2026-03-02","content":"Called mum."}`)
	if r.IsError || !strings.Contains(r.Content, `"captures_folded":2`) {
		t.Fatalf("daily log: %+v", r)
	}
	for _, name := range []string{"c1", "c2"} {
		if f, err := env.Store.FindFile(context.Background(), env.User.ID, "capture", name); err != nil || !f.Attributes.Folded || f.Content != "call mum" {
			t.Fatalf("capture %s: %+v %v", name, f, err)
		}
	}
	if r := exec(t, tools.SaveFile{}, env, `{"file_type":"daily-log","file_name":"2026-03-03","content":"Quiet."}`); !strings.Contains(r.Content, `"captures_folded":0`) {
		t.Fatalf("second log: %+v", r)
	}
}

// TestDailyLogFoldsManyCaptures: a user with more captures waiting than
// one page of files (200) got only the newest 200 folded; the older ones
// stayed unfolded for ever (each fold makes the folded ones the newest).
func TestDailyLogFoldsManyCaptures(t *testing.T) {
	env := storeEnv(t)
	const n = coachd.MaxPageLimit + 50
	for i := range n {
		if r := exec(t, tools.SaveFile{}, env, fmt.Sprintf(`{"file_type":"capture","file_name":"c%03d","content":"idea %d"}`, i, i)); r.IsError {
			t.Fatal(r.Content)
		}
	}
	r := exec(t, tools.SaveFile{}, env, `{"file_type":"daily-log","file_name":"2026-03-02","content":"A full day."}`)
	if want := fmt.Sprintf(`"captures_folded":%d`, n); r.IsError || !strings.Contains(r.Content, want) {
		t.Fatalf("daily log: %+v, want %s", r, want)
	}
	for i := range n {
		if f, err := env.Store.FindFile(context.Background(), env.User.ID, "capture", fmt.Sprintf("c%03d", i)); err != nil || !f.Attributes.Folded {
			t.Fatalf("capture c%03d not folded: %v", i, err)
		}
	}
}

// TestDailyLogFoldKeepsNewContent: the fold read the captures, then saved
// each one back whole with its folded mark: a capture rewritten between
// the two (the user adding to it from another device while Sage saved
// the daily log) got its old content back, the user's words lost.
func TestDailyLogFoldKeepsNewContent(t *testing.T) {
	env := storeEnv(t)
	ctx := context.Background()
	const captures = 20
	for trial := range 30 {
		for i := range captures {
			f := &coachd.File{UserID: env.User.ID, Type: "capture", Name: fmt.Sprintf("c%02d", i), Content: "old"}
			if err := env.Store.SaveFile(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		done := make(chan error)
		go func() {
			var err error
			for i := range captures {
				f := &coachd.File{UserID: env.User.ID, Type: "capture", Name: fmt.Sprintf("c%02d", i), Content: "new"}
				if err = env.Store.SaveFile(ctx, f); err != nil {
					break
				}
			}
			done <- err
		}()
		if r := exec(t, tools.SaveFile{}, env, fmt.Sprintf(`{"file_type":"daily-log","file_name":"d%d","content":"A day."}`, trial)); r.IsError {
			t.Fatal(r.Content)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		for i := range captures {
			f, err := env.Store.FindFile(ctx, env.User.ID, "capture", fmt.Sprintf("c%02d", i))
			if err != nil || f.Content != "new" {
				t.Fatalf("trial %d: capture c%02d reads %q after the fold (%v), want the user's new content", trial, i, f.Content, err)
			}
		}
	}
}
