package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

func TestChatCommand(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	chatEnv := getenvFrom(map[string]string{"COACHD_URL": p.url, "COACHD_KEY": key})

	t.Run("OptionsAnswered", func(t *testing.T) {
		fake.Enqueue(
			anthropictest.Blocks(anthropictest.TextBlock("Checking notes.", 4), anthropictest.ToolUse("toolu_l", "list_notes", `{}`)),
			anthropictest.Blocks(anthropictest.TextBlock("Where to?", 4),
				anthropictest.ToolUse("toolu_o", "show_options", `{"prompt":"Pick a zone","options":["Airport","Downtown"]}`)),
			anthropictest.Text("Downtown, good choice.", 5),
		)
		out := &syncBuffer{}
		err := runChat(context.Background(), []string{"where should I drive?"}, chatEnv, strings.NewReader("2\n"), out, out)
		if err != nil {
			t.Fatal(err)
		}
		got := out.String()
		for _, want := range []string{"Checking notes.", "→ list_notes", "← list_notes:", "Pick a zone", "  1) Airport", "  2) Downtown", "choose 1-2>", "Downtown, good choice.", "session: sess_"} {
			if !strings.Contains(got, want) {
				t.Errorf("output lacks %q:\n%s", want, got)
			}
		}
		last := fake.Requests()[len(fake.Requests())-1].ToolResults()
		if len(last) != 1 || last[0].ResultText() != "Downtown" {
			t.Fatalf("answer sent: %+v", last)
		}
	})
	t.Run("CtrlCCancels", func(t *testing.T) {
		fake.Enqueue(anthropictest.Text("This goes on and on", 4).StallAfter(5))
		ctx, cancel := context.WithCancel(context.Background())
		out := &syncBuffer{}
		done := make(chan error, 1)
		go func() { done <- runChat(ctx, []string{"talk"}, chatEnv, strings.NewReader(""), out, out) }()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), "This") {
			if time.Now().After(deadline) {
				t.Fatalf("no text streamed: %s", out)
			}
			time.Sleep(5 * time.Millisecond)
		}
		cancel() // what SIGINT does to run's context
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		select {
		case <-fake.Disconnects():
		case <-time.After(5 * time.Second):
			t.Fatal("the server did not cancel the upstream call")
		}
		if !strings.Contains(out.String(), "(stopped)") {
			t.Fatalf("output: %s", out)
		}
	})
	t.Run("ErrUnknownSession", func(t *testing.T) {
		// A --session that is not the user's fails; the "session:" line
		// that says how to go on must not name it as if it were.
		out := &syncBuffer{}
		err := runChat(context.Background(), []string{"--session", "sess_06h24rmhteh5c8pt7yyv286zrr", "hi"}, chatEnv, strings.NewReader(""), out, out)
		if err == nil || strings.Contains(out.String(), "session: sess_06h24rmhteh5c8pt7yyv286zrr") {
			t.Fatalf("err %v, output:\n%s", err, out)
		}
	})
	t.Run("ErrNoKey", func(t *testing.T) {
		out := &syncBuffer{}
		if err := runChat(context.Background(), []string{"hi"}, getenvFrom(nil), strings.NewReader(""), out, out); err != errUsage {
			t.Fatalf("got %v", err)
		}
	})
}

// TestChatCommandApproval: coachd chat shows a call waiting for approval
// as Approve / Deny, and the pick answers it.
func TestChatCommandApproval(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo", "--pack", filepath.Join("testdata", "approvalpack"))
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	chatEnv := getenvFrom(map[string]string{"COACHD_URL": p.url, "COACHD_KEY": key})
	fake.Enqueue(
		anthropictest.Blocks(anthropictest.ToolUse("toolu_s", "save_note", `{"note_type":"tip","title":"Hydrate","content":"Drink water","importance":7}`)),
		anthropictest.Text("Not saved.", 3),
	)
	out := &syncBuffer{}
	if err := runChat(context.Background(), []string{"remember to hydrate"}, chatEnv, strings.NewReader("2\n"), out, out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"save_note needs your approval when importance ≥ 5: save_note", "  1) Approve", "  2) Deny", "✗ save_note: ", "Not saved."} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	last := fake.Requests()[len(fake.Requests())-1].ToolResults()
	if len(last) != 1 || !last[0].IsError || !strings.Contains(last[0].ResultText(), "denied") {
		t.Fatalf("answer sent: %+v", last)
	}
}
