// Package backoff calls a function again, with pauses that double from
// first up to most, for as long as it asks to and ctx lasts.
package backoff

import (
	"context"
	"time"
)

// Do calls f until it returns again false, or ctx is done, and returns
// f's last error; between calls it waits first, then twice as long, up
// to most.
func Do(ctx context.Context, first, most time.Duration, f func() (again bool, err error)) error {
	for delay := first; ; delay = min(2*delay, most) {
		again, err := f()
		if !again {
			return err
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}
