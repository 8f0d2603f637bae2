package sqlstore

import (
	"encoding/json"
	"math"
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

// TestAppendEventFields: an event with any one field of coachd.Event, or
// of its usage, set is logged exactly as json.Marshal logs it, and by
// appendEvent except for the fields it leaves to encoding/json: a field
// added to Event or TurnUsage that appendEvent does not write fails here.
func TestAppendEventFields(t *testing.T) {
	var set func(t *testing.T, v reflect.Value, name string)
	set = func(t *testing.T, v reflect.Value, name string) {
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 29, 5, 0, 0, 123456789, time.UTC)))
			return
		}
		switch v.Kind() {
		case reflect.String:
			v.SetString("x <y> \u2028")
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Int64:
			v.SetInt(3)
		case reflect.Float64:
			v.SetFloat(0.0018)
		case reflect.Slice: // json.RawMessage
			v.SetBytes([]byte("{ \"k\" : [1, \"<&>\"] }"))
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
		case reflect.Struct: // Usage, in TurnUsage
			for i := range v.NumField() {
				set(t, v.Field(i), name+"."+v.Type().Field(i).Name)
			}
		default:
			t.Fatalf("field %s: kind %s not covered by this test", name, v.Kind())
		}
	}
	check := func(t *testing.T, name string, ev coachd.Event, byHand bool) {
		t.Helper()
		want, err := json.Marshal(logged(ev))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := appendEvent(nil, ev); ok != byHand {
			t.Errorf("%s set: appendEvent took it: %v, want %v", name, ok, byHand)
		}
		data, err := encodeEvents([]coachd.Event{ev, ev})
		if err != nil {
			t.Fatal(err)
		}
		if data != string(want)+"\n"+string(want) {
			t.Errorf("%s set: logged %s, want %s twice", name, data, want)
		}
	}
	base := coachd.Event{Seq: 7, Turn: 2, Type: coachd.EventTextDelta, Text: "hi <there>"}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		ev := base
		set(t, reflect.ValueOf(&ev).Elem().Field(i), name)
		check(t, name, ev, name != "Err" && name != "Data" && name != "ExpiresAt")
	}
	utyp := reflect.TypeOf(coachd.TurnUsage{})
	for i := range utyp.NumField() {
		name := "Usage." + utyp.Field(i).Name
		ev := base
		ev.Usage = &coachd.TurnUsage{}
		set(t, reflect.ValueOf(ev.Usage).Elem().Field(i), name)
		check(t, name, ev, true)
	}
	zero := int64(0)
	for name, ev := range map[string]coachd.Event{
		"Zero":            {},
		"PlainDelta":      {Seq: 2, Type: coachd.EventTextDelta, Text: "\xff\u2029\t"},
		"ZeroRemaining":   {Seq: 3, Type: coachd.EventUsage, Usage: &coachd.TurnUsage{BudgetRemaining: &zero}},
		"NegativeNumbers": {Seq: -1, Turn: -2, LatencyMS: -3, Usage: &coachd.TurnUsage{Usage: coachd.Usage{InputTokens: -4}, CostUSD: -0.5}},
		"LargeCost":       {Seq: 4, Usage: &coachd.TurnUsage{CostUSD: 123456789.125}},
		"EscapedInput":    {Seq: 5, Input: json.RawMessage(`{"a":"\"<\\\" ","b":"\u2028 \u2029"}`)},
		// Written with an exponent, as encoding/json does (AppendJSONFloat).
		"TinyCost": {Seq: 1, Usage: &coachd.TurnUsage{CostUSD: 1e-9}},
		"HugeCost": {Seq: 1, Usage: &coachd.TurnUsage{CostUSD: 1e22}},
	} {
		check(t, name, ev, true)
	}
	for name, ev := range map[string]coachd.Event{
		"NaNCost":      {Seq: 1, Usage: &coachd.TurnUsage{CostUSD: math.NaN()}},
		"InvalidInput": {Seq: 1, Input: json.RawMessage(`{"a":`)},
	} {
		if _, ok := appendEvent(nil, ev); ok {
			t.Errorf("%s: taken by appendEvent, which leaves it to encoding/json", name)
		}
		want, wantErr := json.Marshal(logged(ev))
		data, err := encodeEvents([]coachd.Event{ev})
		if (err != nil) != (wantErr != nil) || err == nil && data != string(want) {
			t.Errorf("%s: logged %s, %v; want %s, %v", name, data, err, want, wantErr)
		}
	}
}

// FuzzAppendEvent: whatever an event's strings, input and numbers hold,
// appendEvent writes what json.Marshal writes, or leaves the event to it.
func FuzzAppendEvent(f *testing.F) {
	f.Add(int64(1), "text_delta", "hello", []byte(`{"k": "<v>"}`), "ok", int64(9), 0.0018, int64(-1))
	f.Add(int64(0), "", "\u2028\xff", []byte("[1, 2,\n3]"), "", int64(0), 1e-7, int64(0))
	f.Add(int64(-5), "a\"b", "\\", []byte(`"\u2028 \\\" <"`), "\x00", int64(1<<62), 1e21, int64(7))
	f.Fuzz(func(t *testing.T, seq int64, typ, text string, input []byte, result string, tokens int64, cost float64, remaining int64) {
		ev := coachd.Event{Seq: seq, Type: coachd.EventType(typ), Text: text, Input: input, Result: result, ToolName: typ}
		if tokens != 0 || cost != 0 || remaining != 0 {
			ev.Usage = &coachd.TurnUsage{Usage: coachd.Usage{OutputTokens: tokens}, TokensUsed: tokens, CostUSD: cost, Unit: coachd.BudgetUnit(result)}
			if remaining >= 0 {
				ev.Usage.BudgetRemaining = &remaining
			}
		}
		got, ok := appendEvent(nil, ev)
		want, err := json.Marshal(logged(ev))
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("appendEvent wrote %s where json.Marshal fails: %v", got, err)
		}
		if string(got) != string(want) {
			t.Fatalf("appendEvent: %s\njson.Marshal: %s", got, want)
		}
	})
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
