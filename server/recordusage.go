package server

import (
	"fmt"

	"github.com/coachd/coachd"
)

// recordUsage is the Messages API's usage as an SDK's message.usage
// carries it, so that an app forwards it as it is: the four token counts,
// the split of the cache writes by lifetime and the server tools'
// requests, which are priced (a 1-hour write and a web search cost more
// than the counts say), and the service tier, speed, region and thinking
// tokens, which are read and not priced (web fetches cost only their
// tokens). null stands for an absent object, as the API sends it.
type recordUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheCreation            *struct {
		Ephemeral5mInputTokens int64 `json:"ephemeral_5m_input_tokens"`
		Ephemeral1hInputTokens int64 `json:"ephemeral_1h_input_tokens"`
	} `json:"cache_creation"`
	ServerToolUse *struct {
		WebSearchRequests int64 `json:"web_search_requests"`
		WebFetchRequests  int64 `json:"web_fetch_requests"`
	} `json:"server_tool_use"`
	OutputTokensDetails *struct {
		ThinkingTokens int64 `json:"thinking_tokens"`
	} `json:"output_tokens_details"`
	ServiceTier  *string `json:"service_tier"`
	Speed        *string `json:"speed"`
	InferenceGeo *string `json:"inference_geo"`
}

// appendErrs checks every count: 0 to MaxTurnTokens, as tokens_used.
func (u *recordUsage) appendErrs(errs []coachd.FieldError) []coachd.FieldError {
	type count struct {
		name string
		n    int64
	}
	counts := []count{{"input_tokens", u.InputTokens}, {"output_tokens", u.OutputTokens},
		{"cache_read_input_tokens", u.CacheReadInputTokens}, {"cache_creation_input_tokens", u.CacheCreationInputTokens}}
	if c := u.CacheCreation; c != nil {
		counts = append(counts, count{"cache_creation.ephemeral_5m_input_tokens", c.Ephemeral5mInputTokens},
			count{"cache_creation.ephemeral_1h_input_tokens", c.Ephemeral1hInputTokens})
	}
	if st := u.ServerToolUse; st != nil {
		counts = append(counts, count{"server_tool_use.web_search_requests", st.WebSearchRequests},
			count{"server_tool_use.web_fetch_requests", st.WebFetchRequests})
	}
	if d := u.OutputTokensDetails; d != nil {
		counts = append(counts, count{"output_tokens_details.thinking_tokens", d.ThinkingTokens})
	}
	for _, c := range counts {
		if c.n < 0 || c.n > coachd.MaxTurnTokens {
			errs = append(errs, coachd.FieldError{Field: "usage." + c.name, Message: fmt.Sprintf("must be 0 to %d", coachd.MaxTurnTokens), Code: "range"})
		}
	}
	for _, s := range []struct {
		name string
		v    *string
	}{{"service_tier", u.ServiceTier}, {"speed", u.Speed}, {"inference_geo", u.InferenceGeo}} {
		if s.v != nil && len(*s.v) > 100 {
			errs = append(errs, coachd.FieldError{Field: "usage." + s.name, Message: "must be at most 100 characters", Code: "length"})
		}
	}
	return errs
}

// usage is what u charges, nil when u is: the cache writes are at least
// their split's sum, so a split sent alone is not free.
func (u *recordUsage) usage() *coachd.Usage {
	if u == nil {
		return nil
	}
	out := &coachd.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		CacheReadInputTokens: u.CacheReadInputTokens, CacheCreationInputTokens: u.CacheCreationInputTokens}
	if c := u.CacheCreation; c != nil {
		out.CacheCreationInputTokens = max(out.CacheCreationInputTokens, c.Ephemeral5mInputTokens+c.Ephemeral1hInputTokens)
		out.CacheCreation1hInputTokens = c.Ephemeral1hInputTokens
	}
	if st := u.ServerToolUse; st != nil {
		out.WebSearchRequests = st.WebSearchRequests
	}
	return out
}
