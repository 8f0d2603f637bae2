package anthropic

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/packages/param"
	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

var _ coachd.TokenCounter = (*Model)(nil)

// CountTokens asks the Messages API's count_tokens endpoint for the input
// tokens of req exactly as Stream would send it (without cache breakpoints,
// which do not change the count).
func (m *Model) CountTokens(ctx context.Context, req *coachd.ModelRequest) (int64, error) {
	plain := *req
	plain.NoCache = true
	p, err := m.params(&plain)
	if err != nil {
		return 0, err
	}
	c := sdk.MessageCountTokensParams{
		Model: p.Model, Messages: p.Messages, ToolChoice: p.ToolChoice, Thinking: p.Thinking,
	}
	if len(p.System) > 0 {
		c.System = sdk.MessageCountTokensParamsSystemUnion{OfTextBlockArray: p.System}
	}
	for _, t := range req.Tools {
		raw, err := toolJSON(t)
		if err != nil {
			return 0, err
		}
		c.Tools = append(c.Tools, param.Override[sdk.MessageCountTokensToolUnionParam](json.RawMessage(raw)))
	}
	res, err := m.client.Messages.CountTokens(ctx, c)
	if err != nil {
		return 0, mapError(ctx, err)
	}
	return res.InputTokens, nil
}
