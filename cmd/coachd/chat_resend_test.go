package main

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/internal/cutproxy"
)

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
	proxy := cutproxy.New(t, u.Host)
	proxy.CutOnce("") // the first answer lost before any byte of it
	reply := "Leave at five and take the downtown lunch wave."
	fake.Enqueue(anthropictest.Text(reply, 4), anthropictest.Text("a second turn", 4))
	chatEnv := getenvFrom(map[string]string{"COACHD_URL": proxy.URL(), "COACHD_KEY": key})
	out, errOut := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := runChat(ctx, []string{"plan my day"}, chatEnv, strings.NewReader(""), out, errOut); err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, errOut)
	}
	if proxy.Cuts() != 1 {
		t.Fatal("the first answer was not lost")
	}
	if got := strings.TrimSpace(out.String()); got != reply {
		t.Errorf("printed %q, want %q", got, reply)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want 1", n)
	}
}
