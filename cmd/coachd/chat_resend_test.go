package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// newLoseFirstAnswer is a TCP proxy to target that closes its first
// connection as the server's answer begins, before any byte of it reaches
// the client: the turn was admitted, its client never heard. It reports
// whether it did.
func newLoseFirstAnswer(t *testing.T, target string) (string, *atomic.Bool) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	lost := &atomic.Bool{}
	go func() {
		for first := true; ; first = false {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			go func() { io.Copy(s, c); s.Close() }()
			if !first {
				go func() { io.Copy(c, s); c.Close() }()
				continue
			}
			go func() {
				defer c.Close()
				defer s.Close()
				var got []byte
				buf := make([]byte, 4<<10)
				for !bytes.Contains(got, []byte("HTTP/1.1 ")) {
					n, err := s.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil {
						return
					}
				}
				lost.Store(true)
			}()
		}
	}()
	return "http://" + ln.Addr().String(), lost
}

// TestChatResendsWithKey: coachd chat's request is answered, and the
// answer lost on the way before any event: it sends the message again,
// with the key it sent it with, and gets the turn the server ran — one
// model call, the reply printed once, the message stored once.
func TestChatResendsWithKey(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": fake.URL(), "COACHD_ADDR": "127.0.0.1:0"}
	p := MustServe(t, env, "--db", filepath.Join(t.TempDir(), "c.db"), "--demo")
	key := apiKeyRe.FindStringSubmatch(p.stdout.String())[1]
	u, _ := url.Parse(p.url)
	proxy, lost := newLoseFirstAnswer(t, u.Host)
	reply := "Leave at five and take the downtown lunch wave."
	fake.Enqueue(anthropictest.Text(reply, 4), anthropictest.Text("a second turn", 4))
	chatEnv := getenvFrom(map[string]string{"COACHD_URL": proxy, "COACHD_KEY": key})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := runChat(ctx, []string{"plan my day"}, chatEnv, strings.NewReader(""), out, errOut); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if !lost.Load() {
		t.Fatal("the first answer was not lost")
	}
	if got := strings.TrimSpace(out.String()); got != reply {
		t.Errorf("printed %q, want %q", got, reply)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want 1", n)
	}
}
