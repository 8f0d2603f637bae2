package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// holdModelCall serves fake's API at the returned URL with its nth
// Messages request held until release is called (at the test's end at
// the latest); held is closed once that request arrives.
func holdModelCall(t *testing.T, fake *anthropictest.Server, n int32) (url string, held <-chan struct{}, release func()) {
	t.Helper()
	arrived, released := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	gate := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/messages" && calls.Add(1) == n {
			close(arrived)
			select {
			case <-released:
			case <-r.Context().Done():
				return
			}
		}
		fake.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(gate.Close)
	var once sync.Once
	release = func() { once.Do(func() { close(released) }) }
	t.Cleanup(release)
	return gate.URL, arrived, release
}

// replChat is coachd chat at its prompt, fed what the test types.
type replChat struct {
	typed    io.WriteCloser
	out, err *syncBuffer
	done     chan error
}

func startREPL(ctx context.Context, args []string, chatEnv func(string) string) *replChat {
	in, typed := io.Pipe()
	c := &replChat{typed: typed, out: &syncBuffer{}, err: &syncBuffer{}, done: make(chan error, 1)}
	go func() { c.done <- runChat(ctx, args, chatEnv, in, c.out, c.err) }()
	return c
}

// prompts waits for chat's nth prompt; chat ending first fails the test.
func (c *replChat) prompts(t *testing.T, n int) {
	t.Helper()
	select {
	case err := <-c.done:
		t.Fatalf("chat ended: %v\nstdout %q\nstderr %q", err, c.out, c.err)
	case <-waitMatch(c.out, regexp.MustCompile(`(?s)`+strings.Repeat(`you> .*`, n-1)+`you> `)):
	}
}

// say types line at the prompt and waits for the nth prompt after it.
func (c *replChat) say(t *testing.T, line string, n int) {
	t.Helper()
	io.WriteString(c.typed, line+"\n")
	c.prompts(t, n)
}

// end closes chat's input and fails the test if chat then fails.
func (c *replChat) end(t *testing.T) {
	t.Helper()
	c.typed.Close()
	if err := <-c.done; err != nil {
		t.Fatalf("chat: %v\nstdout %q\nstderr %q", err, c.out, c.err)
	}
}
