package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// TestSecondSignalEndsGrace: an operator who stops coachd (Ctrl-C, a
// second SIGTERM) while a turn holds the shutdown grace had the signal
// ignored: the process waited out the whole --shutdown-grace, and only a
// SIGKILL, which stores and settles nothing, ended it sooner. A second
// signal now ends the grace at once: the stream gets its retryable
// server_shutdown, the turn is stored and its reservation settled, and
// the process exits.
//
// SIGHUP (a closed terminal, or an operator's "reload", which coachd has
// none of) ended the process at once, as Go's default does: the turn
// was cut, unstored, its reservation held. It is now a graceful stop as
// SIGTERM is, and the log says which signal came.
func TestSecondSignalEndsGrace(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) { secondSignalEndsGrace(t, sig) })
	}
}

func secondSignalEndsGrace(t *testing.T, sig syscall.Signal) {
	ctx := context.Background()
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "COACHD_ADMIN_KEY="}
	db := filepath.Join(t.TempDir(), "coachd.db")
	p := MustStart(t, env, "--db", db, "--demo", "--shutdown-grace", "10m")
	fake.Enqueue(anthropictest.Text("Halfway through a long answer", 4).StallAfter(6))
	started := make(chan struct{})
	done := make(chan client.Event, 1)
	var sid string
	go func() {
		var last client.Event
		var once bool
		sid, _ = client.New(p.url, p.key, nil).ChatStream(ctx, client.ChatRequest{Message: "tell me everything"}, client.StreamOptions{},
			func(ev client.Event) error {
				if ev.Name == "content_delta" && !once {
					once = true
					close(started)
				}
				last = ev
				return nil
			})
		done <- last
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the turn never streamed")
	}
	p.cmd.Process.Signal(sig)
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(p.stderr.String(), "shutting down"); {
		if time.Now().After(deadline) {
			t.Fatalf("no shutdown after %s:\n%s", sig, p.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(p.stderr.String(), sig.String()) {
		t.Errorf("the shutdown's log line does not name %s:\n%s", sig, p.stderr)
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatalf("still running 30 s after a second %s:\n%s", sig, p.stderr)
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d:\n%s", code, p.stderr)
	}
	last := <-done
	var shut struct {
		Type      string `json:"type"`
		Retryable bool   `json:"retryable"`
	}
	json.Unmarshal(last.Data, &shut)
	if last.Name != "error" || shut.Type != "server_shutdown" || !shut.Retryable {
		t.Errorf("last event %s %s", last.Name, last.Data)
	}
	store := mustOpen(t, db)
	users, _, _ := store.ListUsers(ctx, coachd.Page{})
	msgs, err := store.History(ctx, users[0].ID, sid)
	if err != nil || len(msgs) != 2 || !msgs[1].Partial {
		t.Fatalf("stored %d messages, %v", len(msgs), err)
	}
	if st, err := store.BudgetStatus(ctx, users[0].ID); err != nil || st.TokensReserved != 0 {
		t.Fatalf("budget after shutdown: %+v, %v", st, err)
	}
}
