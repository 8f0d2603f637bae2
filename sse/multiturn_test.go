package sse_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/sse"
)

// TestWriterErrorIsTheTurns: one Writer carries many turns on a session
// stream (GET /v1/sessions/{id}/stream). An error in turn 1, whether its
// turn_ended was logged or not (a process that died), must not change how
// turn 2 ends: coachd still sends turn 2's message_end, asp its
// max_rounds error before message_stop. A review found every later
// turn's end dropped.
func TestWriterErrorIsTheTurns(t *testing.T) {
	turn1 := []coachd.Event{
		{Type: coachd.EventTurnStarted, Turn: 1, Seq: 1, SessionID: "s"},
		{Type: coachd.EventError, Turn: 1, Seq: 2, Err: &coachd.Error{Code: coachd.EAPI, Message: "boom"}},
		{Type: coachd.EventTurnEnded, Turn: 1, Seq: 3, SessionID: "s", StopReason: coachd.TurnError},
	}
	for _, tc := range []struct {
		dialect, stop, want string
		turn1               []coachd.Event
	}{
		{sse.Coachd, coachd.TurnEndTurn, "event: message_end", turn1},
		{sse.ASP, coachd.TurnMaxRounds, "Tool loop exceeded MAX_STEPS", turn1},
		{sse.Coachd, coachd.TurnEndTurn, "event: message_end", turn1[:2]},
		{sse.ASP, coachd.TurnMaxRounds, "Tool loop exceeded MAX_STEPS", turn1[:2]},
	} {
		t.Run(tc.dialect, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := sse.NewWriter(rec, httptest.NewRequest("GET", "/", nil), tc.dialect, -1)
			for _, ev := range tc.turn1 {
				w.Send(ev)
			}
			mark := rec.Body.Len()
			w.Send(coachd.Event{Type: coachd.EventTurnStarted, Turn: 2, Seq: 1, SessionID: "s"})
			w.Send(coachd.Event{Type: coachd.EventTextDelta, Turn: 2, Seq: 2, Text: "hello"})
			w.Send(coachd.Event{Type: coachd.EventTurnEnded, Turn: 2, Seq: 3, SessionID: "s", StopReason: tc.stop})
			w.Close()
			got := rec.Body.String()[mark:]
			if !strings.Contains(got, tc.want) {
				t.Errorf("turn 2 after an errored turn 1 has no %q:\n%s", tc.want, got)
			}
		})
	}
}
