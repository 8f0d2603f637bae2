package stack

import "testing"

// TestGrowNoAlloc: the frame that grows the stack is on the stack, not
// the heap.
func TestGrowNoAlloc(t *testing.T) {
	if n := testing.AllocsPerRun(100, Grow); n != 0 {
		t.Fatalf("Grow allocates %v times", n)
	}
}

// deep recurses n frames of about 1 KiB each, as a goroutine calling into
// SQLite does.
//
//go:noinline
func deep(n int) byte {
	var b [1000]byte
	b[n%len(b)] = byte(n)
	if n == 0 {
		return b[at]
	}
	return deep(n-1) + b[at]
}

// BenchmarkGrow runs goroutines that go 48 frames of 1 KiB deep, as they
// start (the stack copied at every doubling, ever deeper) and after Grow
// (one copy, of one frame).
//
//	go test ./internal/stack -run '^$' -bench Grow -count 6
func BenchmarkGrow(b *testing.B) {
	for _, grow := range []bool{false, true} {
		name := "cold"
		if grow {
			name = "grown"
		}
		b.Run(name, func(b *testing.B) {
			done := make(chan byte)
			for b.Loop() {
				go func() {
					if grow {
						Grow()
					}
					done <- deep(48)
				}()
				<-done
			}
		})
	}
}

// BenchmarkGrowAgain is Grow on a stack it grew already: the call alone,
// its frame never zeroed.
func BenchmarkGrowAgain(b *testing.B) {
	Grow()
	for b.Loop() {
		Grow()
	}
}
