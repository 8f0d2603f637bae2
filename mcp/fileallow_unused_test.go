package mcp

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/coachd/coachd/internal/syncbuf"
)

// TestFileAllowNameNotListed: a server file's allow or deny naming a tool
// the server does not list (a typo, a tool renamed upstream) matches
// nothing; the listing logs each such literal name, patterns aside.
func TestFileAllowNameNotListed(t *testing.T) {
	cfg := stdioConfig(t)
	cfg.Allow, cfg.Deny = []string{"echo", "ecoh", "f*"}, []string{"fial"}
	var logs syncbuf.Buffer
	s := mustServer(t, cfg, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if _, err := s.Tools(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "lists no such tool") {
			got = append(got, line)
		}
	}
	if len(got) != 2 || !strings.Contains(got[0]+got[1], "tool=ecoh") || !strings.Contains(got[0]+got[1], "tool=fial") {
		t.Errorf("warnings (want one for ecoh in allow, one for fial in deny):\n%s\nall logs:\n%s", strings.Join(got, "\n"), logs.String())
	}
}
