package sqlstore

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// TestEncodeEvents: a batch encoded into one string gives each event the
// bytes json.Marshal gives it alone (HTML escaping, omitted fields, the
// error kept beside the event), and each decodes back to the event.
func TestEncodeEvents(t *testing.T) {
	events := []coachd.Event{
		{Seq: 1, Turn: 3, Type: coachd.EventTurnStarted, SessionID: "sess_1", MessageID: "msg_1"},
		{Seq: 2, Turn: 3, Type: coachd.EventTextDelta, Text: "a <b> & \"c\"\n\u2028"},
		{Seq: 300, Turn: 3, Type: coachd.EventToolCallReady, ToolUseID: "toolu_1", ToolName: "save_note", Input: json.RawMessage(`{ "text": "<x>" }`)},
		{Seq: 301, Turn: 3, Type: coachd.EventError, Err: &coachd.Error{Code: coachd.EUPSTREAMBUSY, Message: "busy", Retryable: true,
			RetryAfter: 2 * time.Second, Details: []coachd.FieldError{{Field: "f", Message: "m"}}}},
		{Seq: 302, Turn: 3, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
	}
	data, ends, err := encodeEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	if len(ends) != len(events) || ends[len(ends)-1] != len(data) {
		t.Fatalf("ends %v for %d bytes", ends, len(data))
	}
	start := 0
	for i, ev := range events {
		got := data[start:ends[i]]
		start = ends[i]
		want, err := json.Marshal(logged(ev))
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			t.Errorf("event %d: got %s, want %s", i, got, want)
		}
		back, err := decodeEvent([]byte(got))
		if err != nil {
			t.Fatal(err)
		}
		if back.Seq != ev.Seq || back.Type != ev.Type || back.Text != ev.Text || (ev.Err != nil) != (back.Err != nil) {
			t.Errorf("event %d decoded as %+v", i, back)
		}
	}
}
