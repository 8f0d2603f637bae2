// Package chaos is coachd's chaos suite: go test ./chaos -run Chaos runs
// the real binary against a fake Anthropic API and tools that fail at
// random, clients that leave at random, and SIGKILLs of the process, then
// checks that nothing acknowledged was lost and every ledger balances.
// CHAOS_TURNS sets the number of turns (default: a CI-sized run).
package chaos
