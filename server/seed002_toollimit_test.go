package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSeed002ToolLimitShimmer: seed 002's client counts every toolCall
// into its shimmer counter and resets it only at a roundBoundary ("Shimmer
// stays visible until counter reaches 0", lines 373-381, 860). A round
// past the turn's 15 tool calls (line 878, "15 tool calls per request")
// announced its calls, ran none, and ended the turn with its error and
// no roundBoundary: the "Saving..." shimmer stayed on after the turn. The
// round now closes with its roundBoundary before the error, as a round
// whose tools ran does.
func TestSeed002ToolLimitShimmer(t *testing.T) {
	fake, url, key := seed002Env(t)
	var blocks []anthropictest.BlockSpec
	for i := range 16 {
		blocks = append(blocks, anthropictest.ToolUse(fmt.Sprintf("toolu_l%d", i), "list_notes", `{}`))
	}
	fake.Enqueue(anthropictest.Blocks(blocks...))
	lines := seed002Stream(t, url, key, `{"message":"look at all my notes"}`)
	active, errored := 0, false // the seed's activeToolCountRef, error
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, `{"toolCall":`):
			active++
		case l == `{"roundBoundary":true}`:
			active = 0
		case strings.HasPrefix(l, `{"error":`):
			errored = true
		}
	}
	got := strings.Join(lines, "\n")
	if !errored || lines[len(lines)-1] != "[DONE]" {
		t.Fatalf("the tool limit's error, then [DONE]:\n%s", got)
	}
	if active != 0 {
		t.Fatalf("the client's shimmer counter ends at %d, so its shimmer stays on:\n%s", active, got)
	}
}
