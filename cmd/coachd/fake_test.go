package main

import (
	"bufio"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic"
)

// TestFakeAnthropic runs "coachd fake-anthropic" and talks to it through
// the adapter: first the replayed fixture, then the echo.
func TestFakeAnthropic(t *testing.T) {
	fixture := filepath.Join("testdata", "01-basic-text-ping.sse")
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"coachd", "fake-anthropic", "--addr", "127.0.0.1:0", "--replay", fixture}, getenvFrom(nil), pw, io.Discard)
		pw.Close()
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	var url string
	select {
	case url = <-addr:
	case err := <-done:
		t.Fatalf("fake-anthropic exited: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("fake-anthropic did not start")
	}
	m := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: url, MaxRetries: -1})
	ask := func(text string) string {
		s := m.Stream(ctx, &coachd.ModelRequest{MaxTokens: 100, Messages: []coachd.ModelMessage{{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(text)}}}})
		defer s.Close()
		for s.Next() {
		}
		if err := s.Err(); err != nil {
			t.Fatal(err)
		}
		return coachd.BlocksText(s.Response().Blocks)
	}
	if got := ask("ping"); got != "Hello there!" {
		t.Errorf("replayed fixture: %q", got)
	}
	if got := ask("hi"); got != "(anthropictest) you said: hi" {
		t.Errorf("echo: %q", got)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
}
