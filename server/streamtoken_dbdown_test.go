package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestEventSourceDatabaseDownPG: an EventSource (the eventsource package
// under Node) opens a session's stream_url while Postgres is down, as
// one reconnecting during a restart or a failover does. It is refused
// with the retryable unavailable error, in a 200 stream since it reads no
// status; that stream also said retry: of an hour, so the EventSource
// stayed away for an hour after the database was back, and the turn that
// ran meanwhile never reached it. It now comes back after a few seconds
// and follows the turn.
func TestEventSourceDatabaseDownPG(t *testing.T) {
	node, dir := needSSEClient(t)
	pg := pgtest.NewServer(t)
	e := mustChatEnvOn(t, pg.NewDatabase(t))
	ctx := context.Background()
	sess := e.MustSession(e.alice)
	_, streamURL := e.mintStreamToken(t, e.alice.key, sess.ID)
	pg.Stop()
	cmd := exec.Command(node, filepath.Join(dir, "follow.mjs"), e.url+streamURL)
	cmd.Dir = dir
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	type line struct {
		Open  int    `json:"open"`
		Event string `json:"event"`
		Data  string `json:"data"`
	}
	next := func() line {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("the EventSource client ended (it came back too late, or never): %v", lines.Err())
		}
		var l line
		if err := json.Unmarshal(lines.Bytes(), &l); err != nil {
			t.Fatalf("%q: %v", lines.Text(), err)
		}
		return l
	}
	for {
		l := next()
		if l.Event == "" {
			continue
		}
		var d struct {
			Type      string `json:"type"`
			Retryable bool   `json:"retryable"`
		}
		json.Unmarshal([]byte(l.Data), &d)
		if l.Event != "error" || d.Type != "unavailable" || !d.Retryable {
			t.Fatalf("with the database down the EventSource got %+v, want a retryable unavailable error", l)
		}
		break
	}
	pg.Start(t)
	// A turn runs, held at the model until the EventSource has its
	// beginning: one opened without Last-Event-ID starts at the running
	// turn's beginning, or waits for the next.
	gate := make(chan struct{})
	defer func() {
		select {
		case <-gate:
		default:
			close(gate)
		}
	}()
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply {
		<-gate
		return anthropictest.Text("Drive after five.", 6)
	})
	go e.chat(ctx, e.alice.key, "", `{"message":"when should I drive?","session_id":"`+sess.ID+`"}`)
	for {
		l := next()
		if l.Event == "message_start" {
			close(gate)
		}
		if l.Event == "message_end" {
			return
		}
	}
}
