// Package stack grows a goroutine's stack before deep work.
//
// A goroutine starts with a small stack that the runtime doubles, copying
// it each time, whenever a call needs more. A goroutine that goes on to
// run SQLite (the pure-Go driver's frames are large) or decode JSON grows
// three or four times, each time deep in a call chain, where the copy
// must adjust every frame; under load that was 5 % of coachd's CPU.
// Grow, called first thing, takes the stack to its working size in one
// copy of a frame or two.
package stack

// size is the stack Grow leaves: enough for a SQLite statement or a
// model stream's decoding without growing again.
const size = 64 << 10

// Grow makes sure the calling goroutine's stack holds about 64 KiB. A
// goroutine whose stack is already that large pays only for the call.
func Grow() {
	grow()
}

// grow's frame is most of size: the runtime's check on entry sees it does
// not fit and grows the stack (doubling until it does) before the frame
// is used, while the stack below is one frame deep.
//
//go:noinline
func grow() byte {
	if at < 0 {
		// Never run: b is in the frame, so the stack grows for it, but
		// it is not zeroed (nor its memory touched) on every call.
		var b [size - 16<<10]byte
		return b[-at]
	}
	return 0
}

// at is a variable, never negative, so the compiler cannot drop b.
var at = 0
