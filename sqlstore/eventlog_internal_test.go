package sqlstore

import (
	"encoding/json"
	"reflect"
	"strings"
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
		{Seq: 300, Turn: 3, Type: coachd.EventToolCallReady, ToolUseID: "toolu_1", ToolName: "save_note", Input: json.RawMessage("{\n \"text\": \"<x>\"\n}")},
		{Seq: 301, Turn: 3, Type: coachd.EventError, Err: &coachd.Error{Code: coachd.EUPSTREAMBUSY, Message: "busy", Retryable: true,
			RetryAfter: 2 * time.Second, Details: []coachd.FieldError{{Field: "f", Message: "m"}}}},
		{Seq: 302, Turn: 3, Type: coachd.EventTurnEnded, StopReason: coachd.TurnEndTurn},
	}
	data, err := encodeEvents(events)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(data, "\n")
	if len(rows) != len(events) {
		t.Fatalf("%d lines for %d events", len(rows), len(events))
	}
	for i, ev := range events {
		got := rows[i]
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

// TestEncodeEventsFields: a text delta with any other field of
// coachd.Event set is logged exactly as json.Marshal logs it, so a field
// added to Event that plainText does not check fails here.
func TestEncodeEventsFields(t *testing.T) {
	base := coachd.Event{Seq: 7, Turn: 2, Type: coachd.EventTextDelta, Text: "hi <there>"}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		switch f.Name {
		case "Seq", "Type", "Turn", "Text":
			continue
		}
		ev := base
		v := reflect.ValueOf(&ev).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int64:
			v.SetInt(3)
		case reflect.Slice: // json.RawMessage
			v.SetBytes([]byte(`{"k":1}`))
		case reflect.Pointer:
			v.Set(reflect.New(f.Type.Elem()))
		default:
			t.Fatalf("field %s: kind %s not covered by this test", f.Name, v.Kind())
		}
		if plainText(ev) {
			t.Errorf("field %s set: still taken for a plain text delta", f.Name)
		}
		data, err := encodeEvents([]coachd.Event{ev})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(logged(ev))
		if data != string(want) {
			t.Errorf("field %s set: logged %s, want %s", f.Name, data, want)
		}
	}
	for _, ev := range []coachd.Event{base, {Seq: 1, Type: coachd.EventTextDelta}, {Seq: 2, Type: coachd.EventTextDelta, Text: "\xff\u2029\t"}} {
		if !plainText(ev) {
			t.Errorf("%+v: not a plain text delta", ev)
		}
		data, err := encodeEvents([]coachd.Event{ev, ev})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(logged(ev))
		if data != string(want)+"\n"+string(want) {
			t.Errorf("logged %q, want %s twice", data, want)
		}
	}
}

// FuzzEventBatch: any batch of events decodes, line by line, to what each
// event alone decodes to (json.Marshal of the logged event: the batch
// format adds nothing and loses nothing), whatever the texts hold
// (newlines, U+2028, invalid UTF-8, JSON of their own).
func FuzzEventBatch(f *testing.F) {
	f.Add("hello", "world\n", `{"seq":9}`, int64(1))
	f.Add("", "\u2028\u2029", "\xff\x00", int64(1<<40))
	f.Add("a\\nb", `"`, "<&>", int64(0))
	f.Fuzz(func(t *testing.T, a, b, c string, seq int64) {
		events := []coachd.Event{
			{Seq: seq, Turn: 2, Type: coachd.EventTextDelta, Text: a},
			{Seq: seq + 1, Turn: 2, Type: coachd.EventToolCallReady, ToolUseID: b, Input: json.RawMessage(`{"k":1}`), Text: c},
			{Seq: seq + 2, Turn: 2, Type: coachd.EventTextDelta, Text: b},
			{Seq: seq + 3, Turn: 2, Type: coachd.EventError, Err: &coachd.Error{Code: "x", Message: c}},
		}
		data, err := encodeEvents(events)
		if err != nil {
			t.Fatal(err)
		}
		var got []coachd.Event
		if err := decodeBatch(data, func(ev coachd.Event) bool { got = append(got, ev); return true }); err != nil {
			t.Fatalf("decode %q: %v", data, err)
		}
		if len(got) != len(events) {
			t.Fatalf("%d events back from %d: %q", len(got), len(events), data)
		}
		for i, ev := range events {
			one, err := json.Marshal(logged(ev))
			if err != nil {
				t.Fatal(err)
			}
			want, err := decodeEvent(one)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got[i], want) {
				t.Errorf("event %d: %+v, want %+v", i, got[i], want)
			}
		}
	})
}
