package stream_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sqlstore/pgtest"
	"github.com/coachd/coachd/sse"
	"github.com/coachd/coachd/stream"
)

// TestSageShutdownKeepsHeldToolCall: a sage reader on replica A follows a
// turn running on replica B (one database). It was given the round's
// tool_call_started events, whose toolCall frames the sage writer holds
// until the model's message is complete, when A shuts down: the
// server_shutdown notice names where to resume. Resumed from there on B,
// the reader gets what a reader never cut gets: the toolCall once the
// round's tools run, and none for a round that pauses on show_options.
func TestSageShutdownKeepsHeldToolCall(t *testing.T) {
	call := `{"toolCall":{"id":"toolu_1","name":"save_note"}}`
	started := func(id, name string) coachd.Event {
		return coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: id, ToolName: name}
	}
	ready := func(id, name string) coachd.Event {
		return coachd.Event{Type: coachd.EventToolCallReady, ToolUseID: id, ToolName: name, Input: []byte(`{"options":["a","b"]}`)}
	}
	for _, tt := range []struct {
		name       string
		held, rest []coachd.Event
		want       map[string]int // frame → how many times
		stop       string
	}{{
		name: "Call",
		held: []coachd.Event{started("toolu_1", "save_note")},
		rest: []coachd.Event{
			{Type: coachd.EventUsage}, ready("toolu_1", "save_note"),
			{Type: coachd.EventToolResult, ToolUseID: "toolu_1", ToolName: "save_note", Result: "saved"},
			{Type: coachd.EventRoundBoundary}, {Type: coachd.EventTextDelta, Text: "Saved."},
		},
		stop: coachd.TurnEndTurn,
		want: map[string]int{call: 1, `{"text":"Noting."}`: 1, `{"text":"Saved."}`: 1},
	}, {
		name: "Split",
		held: []coachd.Event{started("toolu_0", "show_options"), started("toolu_1", "save_note")},
		rest: []coachd.Event{
			{Type: coachd.EventUsage}, ready("toolu_0", "show_options"), ready("toolu_1", "save_note"),
			{Type: coachd.EventToolResult, ToolUseID: "toolu_1", ToolName: "save_note", Result: "saved"},
			{Type: coachd.EventInteractionRequested, ToolUseID: "toolu_0", ToolName: "show_options", Input: []byte(`{"options":["a","b"]}`)},
		},
		stop: coachd.TurnAwaitingInput,
		want: map[string]int{call: 0, `{"text":"Noting."}`: 1, `"showOptions"`: 1},
	}} {
		for name, dsn := range map[string]func(t *testing.T) string{
			"sqlite":   func(t *testing.T) string { return filepath.Join(t.TempDir(), "c.db") },
			"postgres": func(t *testing.T) string { return pgtest.NewDatabase(t) },
		} {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				e := mustEnv(t, dsn(t))
				ctx := context.Background()
				sid := e.session(t)
				l, err := e.b.Begin(ctx, e.user.ID, sid)
				if err != nil {
					t.Fatal(err)
				}
				seq := int64(0)
				send := func(ev coachd.Event) {
					seq++
					ev.Seq = seq
					l.Send(ev)
				}
				send(coachd.Event{Type: coachd.EventTurnStarted, SessionID: sid})
				send(coachd.Event{Type: coachd.EventTextDelta, Text: "Noting."})
				for _, ev := range tt.held {
					send(ev)
				}

				// The reader on A, until A shuts down.
				recA := httptest.NewRecorder()
				swA := sse.NewWriter(recA, httptest.NewRequest("GET", "/", nil), sse.Sage, -1)
				swA.SetWriteTimeout(0)
				seen := make(chan struct{})
				done := make(chan error)
				last := seq
				go func() {
					done <- e.a.FollowBuffered(ctx, e.user.ID, sid, coachd.EventID{}, 0, func(ev coachd.Event) error {
						err := swA.Queue(ev)
						if ev.Seq == last && ev.Type != coachd.EventError {
							close(seen) // the last event sent so far
						}
						return err
					}, swA.Flush)
				}()
				<-seen
				e.a.Shutdown()
				if err := <-done; err != stream.ErrShutdown {
					t.Fatalf("the reader on A: %v", err)
				}
				swA.Close()
				onA := recA.Body.String()
				resume := ""
				for _, line := range strings.Split(onA, "\n") {
					if id, ok := strings.CutPrefix(line, "id: "); ok {
						resume = id
					}
				}
				after, err := coachd.ParseEventID(resume)
				if err != nil || !strings.Contains(onA, "restarting") || !strings.Contains(onA, resume) {
					t.Fatalf("no shutdown notice with an id on A: %q", onA)
				}

				// The turn goes on on B.
				for _, ev := range tt.rest {
					send(ev)
				}
				send(coachd.Event{Type: coachd.EventTurnEnded, SessionID: sid, StopReason: tt.stop})
				l.Finish()

				// The reader resumes on B from the notice's id.
				recB := httptest.NewRecorder()
				swB := sse.NewWriter(recB, httptest.NewRequest("GET", "/", nil), sse.Sage, -1)
				swB.SetWriteTimeout(0)
				if err := e.b.FollowBuffered(ctx, e.user.ID, sid, after, l.Turn(), swB.Queue, swB.Flush); err != nil {
					t.Fatal(err)
				}
				swB.Close()
				all := onA + recB.Body.String()
				for frame, n := range tt.want {
					if got := strings.Count(all, frame); got != n {
						t.Errorf("%s went out %d times, want %d:\nA (resume after %s):\n%s\nB:\n%s", frame, got, n, after, onA, recB.Body.String())
					}
				}
			})
		}
	}
}
