//go:build race

package stream_test

// raceEnabled: the race detector slows the store ~10x; the property
// test plays fewer sessions under it.
const raceEnabled = true
