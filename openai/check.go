package openai

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coachd/coachd"
)

// maxUsageTokens bounds a usage count the upstream reports: far above any
// context window, far below what overflows a cost in micro-dollars.
const maxUsageTokens = 1 << 32

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
	if u := s.usage; u != nil {
		counts := map[string]int64{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens}
		if d := u.PromptTokensDetails; d != nil {
			counts["cached_tokens"] = d.CachedTokens
		}
		for name, n := range counts {
			if n < 0 || n > maxUsageTokens {
				return bad("usage %s %d is out of range", name, n)
			}
		}
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

// clampTokens bounds a reported count to [0, maxUsageTokens], for the
// charge of a stream that failed before check could refuse it.
func clampTokens(n int64) int64 {
	return min(max(n, 0), maxUsageTokens)
}
