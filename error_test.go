package coachd_test

import (
	"testing"
	"time"

	"github.com/coachd/coachd"
)

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{0: 0, -time.Second: 0, time.Millisecond: 1, time.Second: 1, 1200 * time.Millisecond: 2, 42 * time.Second: 42} {
		if got := (&coachd.Error{RetryAfter: d}).RetryAfterSeconds(); got != want {
			t.Errorf("%v: got %d, want %d", d, got, want)
		}
	}
}
