package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTurnLeaseRefusedBelowMinimum proves that a --turn-lease under a
// second is a usage error, from the flag or COACHD_TURN_LEASE, for serve
// and for the commands that run turns locally (review, autobuild). Serve
// used to take any lease, and one under 3 ns made the lease renewal's
// ticker panic on the first turn, killing the process with every other
// user's turns.
func TestTurnLeaseRefusedBelowMinimum(t *testing.T) {
	const want = "--turn-lease must be at least 1s"
	for _, lease := range []string{"2ns", "0", "-5s", "999ms"} {
		t.Run("Serve/"+lease, func(t *testing.T) {
			args := []string{"coachd", "serve", "--db", filepath.Join(t.TempDir(), "coachd.db"), "--provider", "demo", "--turn-lease", lease}
			// A run that is not refused serves until the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			var stderr bytes.Buffer
			err := run(ctx, args, getenvFrom(map[string]string{"COACHD_ADDR": "127.0.0.1:0"}), io.Discard, &stderr)
			if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), want) {
				t.Errorf("run = %v, stderr %q; want a usage error about --turn-lease", err, stderr.String())
			}
		})
	}
	t.Run("Env", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var stderr bytes.Buffer
		env := map[string]string{"COACHD_ADDR": "127.0.0.1:0", "COACHD_TURN_LEASE": "2ns"}
		err := run(ctx, []string{"coachd", "serve", "--db", filepath.Join(t.TempDir(), "coachd.db"), "--provider", "demo"}, getenvFrom(env), io.Discard, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), want) {
			t.Errorf("run = %v, stderr %q; want a usage error about --turn-lease", err, stderr.String())
		}
	})
	for _, cmd := range []string{"review", "autobuild"} {
		t.Run(cmd, func(t *testing.T) {
			var stderr bytes.Buffer
			args := []string{"coachd", cmd, "--db", filepath.Join(t.TempDir(), "coachd.db"), "--provider", "demo",
				"--requirements", "r.txt", "--workspace", ".", "--turn-lease", "2ns"}
			err := run(context.Background(), args, getenvFrom(nil), io.Discard, &stderr)
			if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), want) {
				t.Errorf("%s: %v, stderr %q; want a usage error about --turn-lease", cmd, err, stderr.String())
			}
		})
	}
}
