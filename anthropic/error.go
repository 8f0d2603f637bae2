package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
)

// mapError turns what the SDK returned into a *coachd.Error. The cause stays
// in Err, so errors.Is(err, context.Canceled) and errors.As(err,
// **sdk.Error) still work.
func mapError(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var ce *coachd.Error
	if errors.As(err, &ce) {
		return err
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		return apiError(apiErr)
	}
	return coachd.TransportError(ctx, boundedCause(err))
}

// apiError maps an HTTP error status, or an in-stream error event (status
// 200 with the error type in the body), to a coded error.
func apiError(e *sdk.Error) *coachd.Error {
	out := &coachd.Error{Err: causeText(e)}
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
		out.Message += " (" + coachd.UpstreamText(typ, coachd.MaxUpstreamKind) + ")"
	}
	return out
}

// causeText is e with its text fit for the log, where it goes as the
// cause: the request URL shows no password (the SDK quotes the URL whole,
// a gateway's password in the base URL, https://coachd:pw@gateway/,
// included), and the body, which the SDK appends whole, is cut to
// MaxUpstreamText, as clean text. errors.As still finds e.
func causeText(e *sdk.Error) error {
	if e.Request == nil || e.Response == nil {
		// The SDK's text needs both; say what there is.
		return maskedError{fmt.Sprintf("API error %d: %s", e.StatusCode, coachd.UpstreamText(e.RawJSON(), coachd.MaxUpstreamText)), e}
	}
	msg, body := e.Error(), e.RawJSON()
	head := strings.TrimSuffix(msg, " "+body)
	if u := e.Request.URL; u != nil && u.User != nil {
		head = strings.ReplaceAll(head, u.String(), u.Redacted())
	}
	msg = coachd.UpstreamText(head, coachd.MaxUpstreamText)
	if body != "" {
		msg += " " + coachd.UpstreamText(body, coachd.MaxUpstreamText)
	}
	return maskedError{msg, e}
}

// boundedCause is err with its text fit for the log, when it is not: a
// stream's error event that is not an API error quotes what it read.
func boundedCause(err error) error {
	msg := err.Error()
	if clean := coachd.UpstreamText(msg, 2*coachd.MaxUpstreamText); clean != msg {
		return maskedError{clean, err}
	}
	return err
}

// maskedError is an error with its text masked.
type maskedError struct {
	msg string
	err error
}

func (e maskedError) Error() string { return e.msg }
func (e maskedError) Unwrap() error { return e.err }
