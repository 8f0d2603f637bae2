package anthropictest

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"
)

// FuzzParseSSE: the reader never panics, and what it reads survives being
// written in the fake's framing and read again.
func FuzzParseSSE(f *testing.F) {
	f.Add([]byte("event: ping\ndata: {\"type\": \"ping\"}\n\n"))
	f.Add([]byte("data: {\"type\":\"message_stop\"   }\n\ndata: {\ndata: \"foo\":\ndata: true}\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := ParseSSE(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		for _, ev := range evs {
			if bytes.ContainsRune(ev.Data, '\r') || bytes.ContainsAny([]byte(ev.Name), "\r\n") {
				return // CR is a line end to SSE; such input does not round-trip by design
			}
			if err := writeEvent(&buf, ev, 0); err != nil {
				t.Fatal(err)
			}
		}
		again, err := ParseSSE(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 && len(again) == 0 {
			return
		}
		for i := range evs {
			if evs[i].Data == nil {
				evs[i].Data = []byte{}
			}
		}
		for i := range again {
			if again[i].Data == nil {
				again[i].Data = []byte{}
			}
		}
		if !reflect.DeepEqual(evs, again) {
			t.Fatalf("round trip:\n got %q\nwant %q", again, evs)
		}
	})
}

// FuzzParseCassette: the reader never panics, and every interaction it
// returns has exactly one way to be served.
func FuzzParseCassette(f *testing.F) {
	f.Add([]byte("version: 1\ninteractions:\n- request:\n    body: '{}'\n    method: POST\n  response:\n    body: '{\"id\":\"m\"}'\n    code: 200\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		its, err := ParseCassette(data)
		if err != nil {
			return
		}
		for _, it := range its {
			r := it.Reply
			sources := 0
			if r.Status != 0 {
				sources++
				if r.Status == http.StatusOK {
					t.Fatal("a 200 served as an error status")
				}
			}
			if r.Events != nil {
				sources++
			}
			if r.Message != nil {
				sources++
			}
			if sources > 1 {
				t.Fatalf("interaction has %d sources", sources)
			}
		}
	})
}
