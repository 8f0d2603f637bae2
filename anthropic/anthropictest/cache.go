package anthropictest

import (
	"strings"
	"time"

	"github.com/coachd/coachd"
)

// The fake's prompt cache follows the Messages API's documented model:
//
//   - A request is one sequence of blocks in the order tools, system,
//     messages; a cache entry is the exact prefix that ends at a block
//     carrying cache_control (a breakpoint). At most 4 breakpoints are
//     allowed (parseRequest refuses more with a 400).
//   - At each breakpoint the API looks for a live entry at that block or
//     at any of the lookbackBlocks block boundaries before it, and reads
//     the longest one it finds (cache_read_input_tokens).
//   - The prefix up to the request's last breakpoint is written (what was
//     not read is cache_creation_input_tokens); every breakpoint's prefix
//     becomes an entry of its own.
//   - A prefix shorter than the model's minimum (minCacheTokens) is
//     neither written nor read, silently, as the API does.
//   - An entry lives 5 minutes (or 1 hour for "ttl":"1h") from its last
//     use: a read refreshes it. Time is the server's clock (SetClock), so
//     tests move it without sleeping.
//   - input_tokens is what is neither read nor written: the tail after
//     the last breakpoint.
//
// Tokens are the fake's tokenizer: four bytes a token, counted on the
// blocks as JSON without their cache_control; an image's data counts as
// the API bills its pixels (imageTokens), not as its base64.

// lookbackBlocks is how many block boundaries before a breakpoint the API
// checks for an earlier entry.
const lookbackBlocks = 20

// Cache entry lifetimes.
const (
	ttl5m = 5 * time.Minute
	ttl1h = time.Hour
)

// cacheEntry is one cached prefix.
type cacheEntry struct {
	expires time.Time
	ttl     time.Duration
}

// MinCacheTokens is the smallest prefix, in tokens, that model caches:
// 4096 for Opus 4.5/4.6 and Haiku 4.5, 2048 for Sonnet 4.6, Opus 4.7 and
// the Haiku 3 family and for other Haiku models, 1024 for the rest (the
// Sonnet and Opus families), per Anthropic's prompt caching documentation.
func MinCacheTokens(model string) int64 {
	m := strings.ToLower(model)
	has := func(prefixes ...string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(m, p) {
				return true
			}
		}
		return false
	}
	switch {
	case has("claude-opus-4-5", "claude-opus-4-6", "claude-haiku-4-5"):
		return 4096
	case has("claude-sonnet-4-6", "claude-opus-4-7", "claude-3-haiku", "claude-3-5-haiku", "claude-haiku"):
		return 2048
	}
	return 1024
}

// SetClock sets the clock cache lifetimes are measured with (the system
// clock by default).
func (s *Server) SetClock(c coachd.Clock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = c
}

func (s *Server) now() time.Time {
	if s.clock == nil {
		return time.Now()
	}
	return s.clock.Now()
}

// account computes a request's input usage under the cache model above.
// Called with s.mu held.
func (s *Server) account(req *wireRequest) coachd.Usage {
	segs := req.segments()
	if len(segs) == 0 {
		return coachd.Usage{InputTokens: 1}
	}
	now := s.now()
	min := MinCacheTokens(req.Model)
	live := func(i int) bool {
		e, ok := s.cache[segs[i].prefix]
		return ok && now.Before(e.expires) && tokens(segs[i].size) >= min
	}
	total := tokens(segs[len(segs)-1].size)
	read := int64(0)
	for i, seg := range segs {
		if !seg.breakpoint {
			continue
		}
		for j := i; j >= 0 && j >= i-lookbackBlocks; j-- {
			if live(j) {
				e := s.cache[segs[j].prefix]
				e.expires = now.Add(e.ttl) // a read refreshes the entry
				s.cache[segs[j].prefix] = e
				read = max(read, tokens(segs[j].size))
				break
			}
		}
	}
	last := int64(0)
	for _, seg := range segs {
		if !seg.breakpoint || tokens(seg.size) < min {
			continue
		}
		last = max(last, tokens(seg.size))
		e := s.cache[seg.prefix]
		e.ttl = max(e.ttl, seg.ttl)
		e.expires = now.Add(e.ttl)
		s.cache[seg.prefix] = e
	}
	write := max(0, last-read)
	return coachd.Usage{InputTokens: max(1, total-read-write), CacheReadInputTokens: read, CacheCreationInputTokens: write}
}
