package anthropic

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestStreamBodyCopied: a stream's body buffer goes back to the pool at
// its close, which is safe only because the SDK sends a copy of it. The
// test holds the buffer the stream wrote its body into, overwrites it
// once the stream is closed, and asks the sent request for its body again
// (GetBody, as a retry would): it must still be the body the upstream
// received. An SDK that sent coachd's buffer itself fails here.
func TestStreamBodyCopied(t *testing.T) {
	fake := anthropictest.New()
	defer fake.Close()
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	var getBody func() (io.ReadCloser, error)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		getBody = r.GetBody
		return http.DefaultTransport.RoundTrip(r)
	})}
	m := New(Config{APIKey: "test-key", BaseURL: srv.URL, MaxRetries: -1, HTTPClient: hc})
	for i := range 3 {
		fake.Enqueue(anthropictest.Text("Hello there, "+strings.Repeat("again ", i*400), 3))
		req := &coachd.ModelRequest{MaxTokens: 100, System: []coachd.Block{coachd.TextBlock("Be brief.")},
			Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(strings.Repeat("hi ", i*2000))}}}}
		s := m.Stream(context.Background(), req).(*stream)
		buf := s.body
		for s.Next() {
		}
		if s.Err() != nil {
			t.Fatal(s.Err())
		}
		reqs := fake.Requests()
		sent := reqs[len(reqs)-1].Raw
		if buf == nil || !bytes.Equal((*buf)[:len(sent)], sent) {
			t.Fatalf("request %d: the stream's buffer does not hold the body sent", i)
		}
		s.Close()
		if s.body != nil {
			t.Fatal("Close kept the body's buffer")
		}
		full := (*buf)[:cap(*buf)]
		for j := range full {
			full[j] = 'x'
		}
		if getBody == nil {
			t.Fatal("the request sent has no GetBody")
		}
		rc, err := getBody()
		if err != nil {
			t.Fatal(err)
		}
		again, _ := io.ReadAll(rc)
		if !bytes.Equal(again, sent) {
			t.Fatalf("request %d: its body read again after the buffer was reused is %.40q..., want the body sent", i, again)
		}
	}
}
