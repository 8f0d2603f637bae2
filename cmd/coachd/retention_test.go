package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestEventRetentionRefusedBelowMinimum proves that serve refuses an
// --event-retention under a minute, from the flag or from
// COACHD_EVENT_RETENTION, with a usage error: with 0 the sweeper deleted
// the running turn's event log under it (another replica's stop answered
// 404, the turn's own event writes failed).
func TestEventRetentionRefusedBelowMinimum(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"Zero", []string{"--event-retention", "0"}, nil},
		{"Negative", []string{"--event-retention", "-1h"}, nil},
		{"UnderAMinute", []string{"--event-retention", "59s"}, nil},
		{"Env", nil, map[string]string{"COACHD_EVENT_RETENTION": "0s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := map[string]string{"COACHD_ADDR": "127.0.0.1:0"}
			for k, v := range tc.env {
				env[k] = v
			}
			args := append([]string{"coachd", "serve", "--db", filepath.Join(t.TempDir(), "coachd.db"), "--provider", "demo"}, tc.args...)
			// A run that is not refused serves until the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			err := run(ctx, args, getenvFrom(env), io.Discard, &stderr)
			if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), "--event-retention must be at least 1m0s") {
				t.Errorf("run = %v, stderr %q; want a usage error about --event-retention", err, stderr.String())
			}
		})
	}
}

// TestShortestEventRetentionKeepsLiveTurn proves that at the shortest
// --event-retention the sweeper leaves a running turn's log alone: after
// a sweep that began while the turn ran, another replica on the same
// database can still stop it, and the turn's events are still logged.
func TestShortestEventRetentionKeepsLiveTurn(t *testing.T) {
	db := filepath.Join(t.TempDir(), "coachd.db")
	env := map[string]string{"COACHD_ADDR": "127.0.0.1:0"}
	// A chunk a second keeps the turn running through the sweep; the
	// sweeper runs every 50 ms.
	args := []string{"--db", db, "--provider", "demo", "--demo-delay", "1s", "--event-retention", "1m", "--reservation-expiry", "200ms"}
	p := MustServe(t, env, append(args, "--demo")...)
	other := MustServe(t, env, args...)
	m := regexp.MustCompile(`demo user (\S+)\nAPI key: (ck_\S+)`).FindStringSubmatch(p.stdout.String())
	if m == nil {
		t.Fatalf("no demo user in:\n%s", p.stdout)
	}
	userID, key := m[1], m[2]

	req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream", strings.NewReader(`{"message":"Tell me about my options today"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sid := resp.Header.Get("X-Coachd-Session-Id")
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil { // the turn has begun
		t.Fatal(err)
	}
	MustSweep(t, mustOpen(t, db), userID, time.Minute) // the default rate limit, 20/60s
	if st := call(t, "POST", other.url+"/v1/sessions/"+sid+"/stop", key, "", nil, nil); st != http.StatusAccepted {
		t.Errorf("stop from the other replica mid-turn = %d, want 202", st)
	}
	io.Copy(io.Discard, br) // the turn ends, stopped
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, "append events") {
			t.Errorf("the running turn's log was deleted under it: %s", line)
		}
	}
}
