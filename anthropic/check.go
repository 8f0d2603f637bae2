package anthropic

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// maxUsageTokens bounds a usage count the upstream reports: far above any
// context window (16.7M tokens), far below what overflows a cost.
const maxUsageTokens = 1 << 24

// checkInput notes, at a tool_use block's content_block_stop, an input that
// is not a JSON object (cut, padded, or nested past the decoder's depth),
// before Accumulate empties it to {}; at message_stop it rejects the
// message (issue 18's upstream-stream table) when a tool call would so run
// with {} instead of what the model sent (any stop reason but max_tokens
// and refusal), or when a usage count is out of
// range (a negative count would credit the user, a huge one charge the
// whole budget). A message cut by max_tokens keeps its partial input as
// {}, as before.
func (s *stream) checkInput(ev *sdk.MessageStreamEventUnion) error {
	bad := func(format string, args ...any) error {
		return &coachd.Error{Code: coachd.EAPI, Message: "malformed model stream", Err: fmt.Errorf(format, args...)}
	}
	objectInput := func(cb *sdk.ContentBlockUnion) bool {
		in := bytes.TrimSpace(cb.Input)
		return cb.Type != coachd.BlockToolUse || len(in) > 0 && in[0] == '{' && coachd.ValidJSON(in)
	}
	switch ev.Type {
	case "content_block_stop":
		if i := ev.Index; i >= 0 && i < int64(len(s.msg.Content)) && s.badTool == "" && !objectInput(&s.msg.Content[i]) {
			s.badTool = s.msg.Content[i].ID
		}
	case "message_stop":
		u := s.msg.Usage
		for name, n := range map[string]int64{"input_tokens": u.InputTokens, "output_tokens": u.OutputTokens,
			"cache_read_input_tokens": u.CacheReadInputTokens, "cache_creation_input_tokens": u.CacheCreationInputTokens} {
			if n < 0 || n > maxUsageTokens {
				return bad("usage %s %d is out of range", name, n)
			}
		}
		// The loop runs the calls of any reply but one cut by max_tokens
		// or refused, whatever its stop reason says.
		if s.msg.StopReason == sdk.StopReasonMaxTokens || s.msg.StopReason == sdk.StopReasonRefusal {
			return nil
		}
		for i := range s.msg.Content {
			if s.badTool == "" && !objectInput(&s.msg.Content[i]) {
				s.badTool = s.msg.Content[i].ID
			}
		}
		if s.badTool != "" {
			return bad("tool_use %q: its input is not a JSON object", coachd.UpstreamText(s.badTool, coachd.MaxUpstreamKind))
		}
	}
	return nil
}

// validText is s with invalid UTF-8 replaced (U+FFFD); s itself, without
// copying, when it is valid, as it nearly always is.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
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
