//go:build race

package agent

// raceEnabled: the race detector adds allocations of its own, so tests
// that count a function's allocations skip under it.
const raceEnabled = true
