package anthropic

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// closeCount counts the Close calls of a response body.
type closeCount struct {
	io.ReadCloser
	n *atomic.Int32
}

func (c closeCount) Close() error {
	c.n.Add(1)
	return c.ReadCloser.Close()
}

// TestPostSendsSameCall: an untraced call goes out through the SDK's Post,
// a traced one through its streaming method, and the upstream cannot tell
// them apart: the same body, byte for byte, and the same headers. Either
// way the response's body is closed once, whether the stream is read to
// its end or closed after its first event.
func TestPostSendsSameCall(t *testing.T) {
	fake := anthropictest.New()
	defer fake.Close()
	srv := httptest.NewServer(fake.Handler())
	defer srv.Close()
	var closes atomic.Int32
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		res, err := http.DefaultTransport.RoundTrip(r)
		if err == nil {
			res.Body = closeCount{res.Body, &closes}
		}
		return res, err
	})}
	req := &coachd.ModelRequest{MaxTokens: 100, System: []coachd.Block{coachd.TextBlock("Be brief.")},
		Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(strings.Repeat("hi ", 500))}}}}
	var sent [2][]anthropictest.Request
	for i, untraced := range []bool{false, true} {
		m := New(Config{APIKey: "test-key", BaseURL: srv.URL, MaxRetries: -1, HTTPClient: hc, Untraced: untraced})
		for _, early := range []bool{false, true} {
			fake.Enqueue(anthropictest.Text("Hello there, how are you today?", 4))
			closes.Store(0)
			s := m.Stream(context.Background(), req).(*stream)
			if (s.sdk == nil) != untraced || s.sse == nil {
				t.Fatalf("untraced %v: SDK stream %v, coachd's decoder %v", untraced, s.sdk != nil, s.sse != nil)
			}
			if early {
				if !s.Next() {
					t.Fatal(s.Err())
				}
			} else {
				for s.Next() {
				}
				if s.Err() != nil {
					t.Fatal(s.Err())
				}
			}
			s.Close()
			s.Close()
			if n := closes.Load(); n != 1 {
				t.Errorf("untraced %v, closed early %v: the response body closed %d times, want 1", untraced, early, n)
			}
		}
		reqs := fake.Requests()
		sent[i] = reqs[len(reqs)-2:]
	}
	for j := range 2 {
		traced, posted := sent[0][j], sent[1][j]
		if !bytes.Equal(traced.Raw, posted.Raw) || !bytes.HasPrefix(posted.Raw, []byte(`{"stream":true,`)) {
			t.Errorf("call %d: Post sent\n%.200s\nthe streaming method\n%.200s", j, posted.Raw, traced.Raw)
		}
		for _, h := range []string{"Content-Type", "Accept", "Anthropic-Version", "X-Api-Key", "X-Stainless-Retry-Count",
			"X-Stainless-Lang", "X-Stainless-Package-Version", "User-Agent", "Content-Length"} {
			if a, b := traced.Header.Get(h), posted.Header.Get(h); a != b || a == "" {
				t.Errorf("call %d: header %s: Post sent %q, the streaming method %q", j, h, b, a)
			}
		}
	}
}
