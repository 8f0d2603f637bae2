package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDo: f runs until it stops asking, and a done context ends the
// waiting with f's last error.
func TestDo(t *testing.T) {
	calls := 0
	err := Do(context.Background(), time.Microsecond, time.Microsecond, func() (bool, error) {
		calls++
		return calls < 3, errors.New("busy")
	})
	if calls != 3 || err == nil {
		t.Errorf("%d calls, %v; want 3 and the last error", calls, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	calls = 0
	err = Do(ctx, time.Hour, time.Hour, func() (bool, error) {
		calls++
		cancel()
		return true, errors.New("down")
	})
	if calls != 1 || err == nil || err.Error() != "down" {
		t.Errorf("after the context ended: %d calls, %v", calls, err)
	}
}
