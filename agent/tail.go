package agent

import "github.com/coachd/coachd"

// withTail appends the turn's context (systemPrompt's tail) to the newest
// user message of req as blocks of its own, after the user's words and
// tool results, and tells the adapter so (TailBlocks): the cache
// breakpoint goes before them, and the next round, which sends them again
// after its own newest message, still reads the whole history from the
// cache. A request that does not end with a user message gets no tail.
func withTail(req *coachd.ModelRequest, tail []coachd.Block) {
	n := len(req.Messages)
	if len(tail) == 0 || n == 0 || req.Messages[n-1].Role != coachd.RoleUser {
		return
	}
	last := req.Messages[n-1]
	last.Blocks = append(append([]coachd.Block(nil), last.Blocks...), tail...)
	req.Messages[n-1] = last
	req.TailBlocks = len(tail)
}
