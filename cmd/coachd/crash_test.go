package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// TestCrashMidTurn kills coachd (SIGKILL, a real process) in the middle of
// a turn — once while the first model call streams, once after a tool
// round was stored while the next model call streams — restarts it on the
// same database and continues the session: the user's message is there,
// the stored history is valid for the API (the fake rejects an unanswered
// tool_use), and the next turn succeeds.
func TestCrashMidTurn(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replies []anthropictest.Reply
		killAt  int // kill once the fake has this many requests
		stored  int // messages stored at the kill
	}{
		{"FirstRound", []anthropictest.Reply{anthropictest.Text("Thinking about your week", 4).StallAfter(5)}, 1, 1},
		{"AfterToolRound", []anthropictest.Reply{
			anthropictest.Blocks(anthropictest.TextBlock("Saving that. ", 4),
				anthropictest.ToolUse("toolu_s", "save_note", `{"note_type":"preference","title":"Mornings","content":"Likes to drive mornings"}`)),
			anthropictest.Text("Noted, and", 3).StallAfter(5),
		}, 2, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			fake := anthropictest.NewServer()
			defer fake.Close()
			// The killed process's turn lease keeps the session busy for
			// COACHD_TURN_LEASE; the next turn queues behind it (on_busy=wait).
			env := []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "COACHD_ADMIN_KEY=", "COACHD_TURN_LEASE=3s"}
			db := filepath.Join(t.TempDir(), "coachd.db")
			p := MustStart(t, env, "--db", db, "--demo")
			fake.Enqueue(tc.replies...)

			sidc := make(chan string, 1)
			// The user message is stored behind the first model call, and
			// its acknowledgement (message_start) follows the write; a tool
			// round is stored behind the next call, before any of that
			// call's text reaches the client. The kill waits for what
			// promises the stored messages, as well as for the fake's
			// requests: the round's write may still be going on when the
			// next request arrives (it did, once, in a CI-like run under -race).
			acked, roundText := make(chan struct{}), make(chan struct{})
			go func() {
				round := false
				sid, _ := client.New(p.url, p.key, nil).ChatStream(ctx, client.ChatRequest{Message: "remember I like mornings"}, client.StreamOptions{},
					func(ev client.Event) error {
						switch {
						case ev.Name == "message_start":
							close(acked)
						case ev.Name == "function_result":
							round = true
						case ev.Name == "content_delta" && round:
							close(roundText)
							round = false
						}
						return nil
					})
				sidc <- sid
			}()
			select {
			case <-acked:
			case <-time.After(10 * time.Second):
				t.Fatal("no message_start")
			}
			if tc.stored > 1 {
				select {
				case <-roundText:
				case <-time.After(10 * time.Second):
					t.Fatal("no text after the tool round")
				}
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(fake.Requests()) < tc.killAt {
				if time.Now().After(deadline) {
					t.Fatalf("the fake got %d requests", len(fake.Requests()))
				}
				time.Sleep(5 * time.Millisecond)
			}
			p.kill()
			sid := <-sidc
			if !coachd.ValidID(coachd.PrefixSession, sid) {
				t.Fatalf("no session id from the stream: %q", sid)
			}

			p = MustStart(t, env, "--db", db, "--demo")
			c := client.New(p.url, p.key, nil)
			// Right after the crash the dead process's lease still holds.
			_, err := c.ChatStream(ctx, client.ChatRequest{SessionID: sid, Message: "hello?"}, client.StreamOptions{}, func(client.Event) error { return nil })
			if coachd.ErrorCode(err) != coachd.ETURNINPROGRESS {
				t.Fatalf("right after restart: %v, want turn_in_progress", err)
			}
			msgs, _, err := c.Messages(ctx, sid, coachd.Page{})
			if err != nil || len(msgs) != tc.stored || msgs[0].Content != "remember I like mornings" {
				t.Fatalf("after restart: %d messages, %v", len(msgs), err)
			}
			fake.Enqueue(anthropictest.Text("Good morning plan ready.", 5))
			var stop string
			_, err = c.ChatStream(ctx, client.ChatRequest{SessionID: sid, Message: "so, what now?"}, client.StreamOptions{WaitBusy: true}, func(ev client.Event) error {
				if ev.Name == "message_end" {
					stop = string(ev.Data)
				}
				return nil
			})
			if err != nil || !strings.Contains(stop, `"stop_reason":"end_turn"`) {
				t.Fatalf("next turn: %v %s", err, stop)
			}
			// The turn the crash cut short stays in the history; the new
			// message is the last block sent.
			sent := fake.Requests()[len(fake.Requests())-1].Messages()
			lastMsg := sent[len(sent)-1].Blocks
			if got := lastMsg[len(lastMsg)-1].Text; got != "so, what now?" {
				t.Fatalf("last request ends with %q", got)
			}
		})
	}
}

// TestShutdownCancelsLongTurns stops the program while a turn waits on a
// stalled upstream: after the grace period the turn is cancelled like a
// client leaving — its partial reply stored, its reservation settled —
// and run returns nil.
func TestShutdownCancelsLongTurns(t *testing.T) {
	ctx := context.Background()
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	db := filepath.Join(t.TempDir(), "c.db")
	p := MustServe(t, env, "--db", db, "--demo", "--shutdown-grace", "200ms")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	fake.Enqueue(anthropictest.Text("Halfway through a long answer", 4).StallAfter(6))
	sidc := make(chan string, 1)
	started := make(chan struct{}, 1)
	var last client.Event
	go func() {
		sid, _ := client.New(p.url, key, nil).ChatStream(ctx, client.ChatRequest{Message: "tell me everything"}, client.StreamOptions{},
			func(ev client.Event) error {
				last = ev
				if ev.Name == "content_delta" {
					select {
					case started <- struct{}{}:
					default:
					}
				}
				return nil
			})
		sidc <- sid
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never streamed")
	}
	if err := p.stop(t); err != nil {
		t.Fatalf("run = %v, want nil", err)
	}
	sid := <-sidc
	// The stream's last word: a retryable server_shutdown error naming the
	// last event id, which the client resumes from after the restart.
	var shut struct {
		Type        string `json:"type"`
		Retryable   bool   `json:"retryable"`
		LastEventID string `json:"last_event_id"`
	}
	json.Unmarshal(last.Data, &shut)
	if last.Name != "error" || shut.Type != "server_shutdown" || !shut.Retryable || shut.LastEventID == "" || shut.LastEventID != last.ID {
		t.Errorf("last event %s %s (id %q)", last.Name, last.Data, last.ID)
	}
	store := mustOpen(t, db)
	users, _, _ := store.ListUsers(ctx, coachd.Page{})
	msgs, err := store.History(ctx, users[0].ID, sid)
	if err != nil || len(msgs) != 2 || !msgs[1].Partial || msgs[1].Content == "" {
		t.Fatalf("stored %d messages, %v", len(msgs), err)
	}
	if st, err := store.BudgetStatus(ctx, users[0].ID); err != nil || st.TokensReserved != 0 {
		t.Fatalf("budget after shutdown: %+v, %v", st, err)
	}
}
