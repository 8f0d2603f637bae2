package agent

import (
	"time"

	"github.com/coachd/coachd"
)

// promptCacheTTL is how long the API keeps a prompt-cache entry (the
// default 5-minute one) after its last read or write.
const promptCacheTTL = 5 * time.Minute

// writesUnread reports whether the history entry a turn's first request
// would write (CacheMarks' newest and previous-round marks) is likely
// never read, so that the request writes none (NoHistoryCache): the user
// came back after the cache expired (no entry to read either), and the
// session's previous turn was one request (no tool_use), so this one
// likely is too and nothing reads the entry before it expires. A daily
// user who only chats paid 1.25x for every token of every turn's
// history; one whose turns call tools still gets the entry, which the
// turn's next rounds read at 0.1x.
func writesUnread(history []*coachd.Message) bool {
	n := len(history)
	for n > 0 && isSummary(history[n-1]) {
		n-- // a summary the turn's compaction just stored
	}
	if n < 2 || !turnStart(history[n-1]) || history[n-1].CreatedAt.Sub(history[n-2].CreatedAt) <= promptCacheTTL {
		return false
	}
	for i := n - 2; i >= 0; i-- {
		m := history[i]
		for _, b := range m.Blocks {
			if m.Role == coachd.RoleAssistant && b.Type == coachd.BlockToolUse {
				return false
			}
		}
		if turnStart(m) {
			return true
		}
	}
	return false
}

func isSummary(m *coachd.Message) bool {
	_, ok := summaryOf(m)
	return ok
}
