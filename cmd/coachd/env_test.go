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

// TestBadEnvValueRefused proves that a COACHD_* variable holding a number,
// a duration or a switch the flag it stands for would refuse is a usage
// error naming the variable and its value, as the flag given the same
// value is, and not replaced by the built-in default (which served with
// no monthly limit, a 5-minute reservation expiry instead of 30 s, and
// nothing in the log saying why).
func TestBadEnvValueRefused(t *testing.T) {
	for _, tc := range []struct{ env, flag, value string }{
		{"COACHD_MONTHLY_MESSAGES", "--monthly-messages", "5k"},
		{"COACHD_RESERVATION_EXPIRY", "--reservation-expiry", "30"},
		{"COACHD_MAX_CONNS", "--max-conns", "1e3"},
		{"COACHD_SHUTDOWN_GRACE", "--shutdown-grace", "30"},
		{"COACHD_NO_PROMPT_CACHE", "--no-prompt-cache", "yes"},
	} {
		t.Run(tc.env, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "coachd.db")
			base := []string{"coachd", "serve", "--db", db, "--provider", "demo"}
			// A run that is not refused serves until the context ends.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			err := run(ctx, append(base, tc.flag+"="+tc.value), getenvFrom(map[string]string{"COACHD_ADDR": "127.0.0.1:0"}), io.Discard, io.Discard)
			if !errors.Is(err, errUsage) {
				t.Fatalf("%s=%s: %v, want a usage error", tc.flag, tc.value, err)
			}
			var out, logs syncBuffer
			err = run(ctx, base, getenvFrom(map[string]string{"COACHD_ADDR": "127.0.0.1:0", tc.env: tc.value}), &out, &logs)
			if !errors.Is(err, errUsage) {
				t.Fatalf("%s=%s: run returned %v (served: %v), want a usage error like %s=%s",
					tc.env, tc.value, err, strings.Contains(out.String(), "coachd listening"), tc.flag, tc.value)
			}
			if want := tc.env + `="` + tc.value + `"`; !strings.Contains(logs.String(), want) {
				t.Errorf("stderr %q does not name %s", logs.String(), want)
			}
		})
	}
	t.Run("UsersCreate", func(t *testing.T) {
		var stderr bytes.Buffer
		env := map[string]string{"COACHD_DB": filepath.Join(t.TempDir(), "coachd.db"), "COACHD_DEFAULT_BUDGET": "1M"}
		err := run(context.Background(), []string{"coachd", "users", "create", "--name", "x"}, getenvFrom(env), io.Discard, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), `COACHD_DEFAULT_BUDGET="1M"`) {
			t.Errorf("users create with COACHD_DEFAULT_BUDGET=1M: %v, stderr %q; want a usage error naming it", err, stderr.String())
		}
	})
	t.Run("Review", func(t *testing.T) {
		var stderr bytes.Buffer
		env := map[string]string{"COACHD_DB": filepath.Join(t.TempDir(), "coachd.db"), "COACHD_MODEL_TIMEOUT": "2m30"}
		err := run(context.Background(), []string{"coachd", "review", "--requirements", "r.txt", "--workspace", "."}, getenvFrom(env), io.Discard, &stderr)
		if !errors.Is(err, errUsage) || !strings.Contains(stderr.String(), `COACHD_MODEL_TIMEOUT="2m30"`) {
			t.Errorf("review with COACHD_MODEL_TIMEOUT=2m30: %v, stderr %q; want a usage error naming it", err, stderr.String())
		}
	})
}
