package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coachd/coachd"
)

// maxUsageTokens bounds a usage count the upstream reports: far above any
// context window (16.7M tokens), far below what overflows a cost.
const maxUsageTokens = 1 << 24

// check rejects a finished message the server cannot have meant (issue
// 18's upstream-stream table): a usage count out of range (a negative
// count would credit the user, a huge one charge the whole budget), or,
// when the reply asks for tool calls, a call whose arguments are not a
// JSON object (cut, padded, nested past the decoder's depth): the tool
// would run with {} instead. A call cut by max_tokens keeps {}, as before.
func (s *stream) check() error {
	bad := func(format string, args ...any) error {
		return &coachd.Error{Code: coachd.EAPI, Message: "malformed model stream", Err: fmt.Errorf(format, args...)}
	}
	if u := s.usage; u != nil && !u.sane() {
		return bad("usage out of range: %d prompt, %d completion tokens", u.PromptTokens, u.CompletionTokens)
	}
	if s.stopReason() != coachd.StopToolUse {
		return nil
	}
	for _, bs := range s.blocks {
		if bs.b.Type != coachd.BlockToolUse {
			continue
		}
		if a := strings.TrimSpace(bs.args.String()); a != "" && (a[0] != '{' || !json.Valid([]byte(a))) {
			return bad("tool call %q: its arguments are not a JSON object", bs.b.ID)
		}
	}
	return nil
}

// sane reports whether every count is in [0, maxUsageTokens]; when not,
// the charge of the stream is estimated from its size instead.
func (u *chunkUsage) sane() bool {
	ok := func(n int64) bool { return n >= 0 && n <= maxUsageTokens }
	return ok(u.PromptTokens) && ok(u.CompletionTokens) && (u.PromptTokensDetails == nil || ok(u.PromptTokensDetails.CachedTokens))
}

// saneTokens is n, or 0 when n is out of range: a failed stream's charge
// then falls back to the estimate of what was streamed, never to a count
// the upstream cannot have meant.
func saneTokens(n int64) int64 {
	if n < 0 || n > maxUsageTokens {
		return 0
	}
	return n
}
