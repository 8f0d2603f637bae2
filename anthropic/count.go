package anthropic

import (
	"context"

	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

var _ coachd.TokenCounter = (*Model)(nil)

// CountTokens asks the Messages API's count_tokens endpoint for the input
// tokens of req exactly as Stream would send it (without cache breakpoints,
// which do not change the count).
func (m *Model) CountTokens(ctx context.Context, req *coachd.ModelRequest) (int64, error) {
	body, err := m.appendBody(nil, req, bodyCount, false)
	if err != nil {
		return 0, err
	}
	// As for Stream, coachd writes the body and the SDK sends it (body.go).
	p := param.Override[sdk.MessageCountTokensParams](emptyBody)
	p.Model = m.model(req)
	res, err := m.client.Messages.CountTokens(ctx, p, option.WithRequestBody("application/json", body))
	if err != nil {
		return 0, mapError(ctx, err, m.secrets())
	}
	return res.InputTokens, nil
}
