package anthropic_test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestRetrySendsSameBody: the body coachd hands the SDK is the one every
// attempt sends: a 529 and then a 200 give two requests with equal bodies
// and the SDK's own headers, the retry counted in X-Stainless-Retry-Count.
func TestRetrySendsSameBody(t *testing.T) {
	eachPath(t, func(t *testing.T, untraced bool) {
		srv := MustServer(t)
		m := newModel(srv, anthropic.Config{MaxRetries: 2, Untraced: untraced})
		srv.Enqueue(anthropictest.Status(529, http.Header{"Retry-After-Ms": {"1"}}, ""), anthropictest.Text("ok", 0))
		if _, _, err := drain(m.Stream(context.Background(), fullRequest())); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("requests = %d, want 2", len(reqs))
		}
		first, second := reqs[0], reqs[1]
		if len(first.Raw) == 0 || !bytes.Equal(first.Raw, second.Raw) {
			t.Errorf("retry body\n got %s\nwant %s", second.Raw, first.Raw)
		}
		for _, h := range []struct{ name, want string }{
			{"Content-Type", "application/json"}, {"Anthropic-Version", "2023-06-01"}, {"X-Api-Key", "test-key"},
			{"Accept", "application/json"}, {"X-Stainless-Lang", "go"},
		} {
			for i, r := range reqs {
				if got := r.Header.Get(h.name); got != h.want {
					t.Errorf("request %d %s = %q, want %q", i, h.name, got, h.want)
				}
			}
		}
		if got := second.Header.Get("X-Stainless-Retry-Count"); got != "1" {
			t.Errorf("retry count header = %q, want 1", got)
		}
		if !bytes.HasPrefix(first.Raw, []byte(`{"stream":true,"max_tokens":`)) || bytes.Count(first.Raw, []byte(`"stream":`)) != 1 {
			t.Errorf("body does not start with the stream flag, once: %s", first.Raw)
		}
	})
}

// TestBodyCapFollowsBody: the next body's buffer is sized from the last
// body coachd wrote.
func TestBodyCapFollowsBody(t *testing.T) {
	srv := MustServer(t)
	m := newModel(srv, anthropic.Config{})
	req := hello()
	req.Messages[0].Blocks[0].Text = strings.Repeat("a long message ", 1000)
	srv.Enqueue(anthropictest.Text("ok", 0))
	if _, _, err := drain(m.Stream(context.Background(), req)); err != nil {
		t.Fatal(err)
	}
	n := len(srv.Requests()[0].Raw)
	if got, want := m.BodyCap(), n+n/4; got != want {
		t.Errorf("after a body of %d bytes the next buffer is %d bytes, want %d", n, got, want)
	}
}
