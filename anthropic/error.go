package anthropic

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
)

// mapError turns what the SDK returned into a *coachd.Error. The cause stays
// in Err, so errors.Is(err, context.Canceled) and errors.As(err,
// **sdk.Error) still work.
// keys are the credentials coachd sent (Model.secrets), redacted from the
// upstream's text with whatever credential the request carried.
func mapError(ctx context.Context, err error, keys []string) error {
	if err == nil {
		return nil
	}
	var ce *coachd.Error
	if errors.As(err, &ce) {
		return err
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return apiError(apiErr, keys)
	}
	return coachd.TransportError(ctx, boundedCause(err, keys))
}

// apiError maps an HTTP error status, or an in-stream error event (status
// 200 with the error type in the body), to a coded error.
func apiError(e *sdk.Error, keys []string) *coachd.Error {
	secrets := sentSecrets(e.Request, keys)
	out := &coachd.Error{Err: causeText(e, secrets)}
	typ := string(e.Type())
	status := e.StatusCode
	if status == http.StatusOK {
		// An `event: error` mid-stream: only its type says what happened.
		switch typ {
		case "overloaded_error", "rate_limit_error",
			// Bedrock's stream exceptions, as the SDK names them.
			"throttlingException", "ThrottlingException",
			"serviceUnavailableException", "ServiceUnavailableException":
			status = 529
		default:
			status = 500
		}
	}
	switch {
	case status == http.StatusTooManyRequests || status == 529 || status == http.StatusServiceUnavailable:
		// 503 is Bedrock's and Vertex's "unavailable": busy, as 529 is.
		out.Code, out.Message, out.Retryable = coachd.EUPSTREAMBUSY, "model is busy, retry in a few seconds", true
		if e.Response != nil {
			out.RetryAfter = coachd.RetryAfter(e.Response.Header)
		}
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge:
		out.Code, out.Message = coachd.EINVALID, "model rejected the request"
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		out.Code, out.Message = coachd.EUPSTREAMAUTH, "model rejected the credentials"
	case status == http.StatusNotFound:
		out.Code, out.Message = coachd.ENOTFOUND, "model or endpoint not found"
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout && typ == "timeout_error":
		out.Code, out.Message = coachd.ETIMEOUT, "model request timed out"
	default:
		out.Code, out.Message = coachd.EAPI, "model request failed"
	}
	if typ != "" {
		out.Message += " (" + coachd.UpstreamText(coachd.Redacted(typ, secrets...), coachd.MaxUpstreamKind) + ")"
	}
	return out
}

// causeText is e with its text fit for the log, where it goes as the
// cause: the request URL shows no password (the SDK quotes the URL whole,
// a gateway's password in the base URL, https://coachd:pw@gateway/,
// included), and the body, which the SDK appends whole, is cut to
// MaxUpstreamText, as clean text, with no secret it quotes (a gateway
// that echoes the key it was sent). errors.As still finds e.
func causeText(e *sdk.Error, secrets []string) error {
	body := coachd.Redacted(e.RawJSON(), secrets...)
	if e.Request == nil || e.Response == nil {
		// The SDK's text needs both; say what there is.
		return coachd.Masked(e, fmt.Sprintf("API error %d: %s", e.StatusCode, coachd.UpstreamText(body, coachd.MaxUpstreamText)))
	}
	msg := e.Error()
	head := coachd.Redacted(strings.TrimSuffix(msg, " "+e.RawJSON()), secrets...)
	if u := e.Request.URL; u != nil && u.User != nil {
		head = strings.ReplaceAll(head, u.String(), u.Redacted())
	}
	msg = coachd.UpstreamText(head, coachd.MaxUpstreamText)
	if body != "" {
		msg += " " + coachd.UpstreamText(body, coachd.MaxUpstreamText)
	}
	return coachd.Masked(e, msg)
}

// boundedCause is err with its text fit for the log, when it is not: a
// stream's error event that is not an API error quotes what it read.
func boundedCause(err error, keys []string) error {
	msg := err.Error()
	if clean := coachd.UpstreamText(coachd.Redacted(msg, keys...), 2*coachd.MaxUpstreamText); clean != msg {
		return coachd.Masked(err, clean)
	}
	return err
}

// sentSecrets are the secrets a request carried: its x-api-key, its
// Authorization value and that value's token (Bearer), and keys.
func sentSecrets(req *http.Request, keys []string) []string {
	out := slices.Clone(keys)
	if req == nil {
		return out
	}
	out = append(out, req.Header.Get("X-Api-Key"))
	if auth := req.Header.Get("Authorization"); auth != "" {
		out = append(out, auth)
		if _, tok, ok := strings.Cut(auth, " "); ok {
			out = append(out, strings.TrimSpace(tok))
		}
	}
	return out
}

// maxErrorBody bounds how much of an error answer is read: the SDK reads
// the body whole into its error, and a gateway chooses its length.
const maxErrorBody = 64 << 10

// capErrorBody is a middleware that lets the SDK read at most maxErrorBody
// of an error answer's body.
func capErrorBody(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if err == nil && res != nil && res.StatusCode >= 400 && res.Body != nil {
		res.Body = cappedBody{io.LimitReader(res.Body, maxErrorBody), res.Body}
	}
	return res, err
}

// cappedBody reads a body up to its cap and closes the whole of it.
type cappedBody struct {
	io.Reader
	io.Closer
}
