package anthropic

import (
	"context"
	"errors"
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
	return coachd.TransportError(ctx, err)
}

// apiError maps an HTTP error status, or an in-stream error event (status
// 200 with the error type in the body), to a coded error.
func apiError(e *sdk.Error) *coachd.Error {
	out := &coachd.Error{Err: passwordMasked(e)}
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
		out.Message += " (" + typ + ")"
	}
	return out
}

// passwordMasked is e with its text's request URL showing no password:
// the SDK quotes the URL whole, a gateway's password in the base URL
// (https://coachd:pw@gateway/) included, and the text is logged.
// errors.As still finds e.
func passwordMasked(e *sdk.Error) error {
	if e.Request == nil || e.Request.URL == nil || e.Request.URL.User == nil {
		return e
	}
	u := e.Request.URL
	return maskedError{strings.ReplaceAll(e.Error(), u.String(), u.Redacted()), e}
}

// maskedError is an error with its text masked.
type maskedError struct {
	msg string
	err error
}

func (e maskedError) Error() string { return e.msg }
func (e maskedError) Unwrap() error { return e.err }
