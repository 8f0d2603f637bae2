package client_test

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/coachd/coachd/client"
)

func readAll(t testing.TB, s string) []client.Event {
	er := client.NewEventReader(strings.NewReader(s))
	var out []client.Event
	for {
		ev, err := er.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		out = append(out, ev)
	}
}

func TestEventReader(t *testing.T) {
	got := readAll(t, ": ping\n\nevent: message_start\ndata: {\"a\":1}\n\n"+
		"data:no-space\r\ndata: two\r\n\r\n"+
		"event: x\rdata: cr\r\r"+
		"id: 7\nretry: 10\nfoo\n\n"+ // no data: not dispatched
		"data: cut off at the end")
	want := []client.Event{
		{Name: "message_start", Data: []byte(`{"a":1}`)},
		{Name: "", Data: []byte("no-space\ntwo")},
		{Name: "x", Data: []byte("cr")},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d events: %q", len(got), got)
	}
	for i := range want {
		if got[i].Name != want[i].Name || string(got[i].Data) != string(want[i].Data) {
			t.Fatalf("event %d: got %q %q, want %q %q", i, got[i].Name, got[i].Data, want[i].Name, want[i].Data)
		}
	}
}

func FuzzEventReader(f *testing.F) {
	f.Add("event: a\ndata: b\n\n")
	f.Add("data: x\r\n\r\n:c\n\n")
	f.Add("data\ndata:\n\n")
	f.Fuzz(func(t *testing.T, s string) {
		er := client.NewEventReader(strings.NewReader(s))
		for range len(s) + 1 {
			ev, err := er.Next()
			if err != nil {
				return
			}
			if strings.ContainsAny(ev.Name, "\r\n") {
				t.Fatalf("event name holds a line break: %q", ev.Name)
			}
		}
		t.Fatal("more events than input bytes")
	})
}
