// Package coachd is the domain of the coachd server: the types every other
// package speaks (users, sessions, messages, content blocks, notes, tools,
// model events, stream events), coded errors and the service interfaces that
// the store, the model adapters and the runner implement. It imports only the
// standard library.
package coachd

import (
	"errors"
	"fmt"
	"time"
)

// Error codes. They are stable strings: they appear in JSON error bodies, in
// SSE error events and in logs.
const (
	EINVALID        = "invalid_request"        // bad input; 400
	EUNAUTHORIZED   = "unauthorized"           // missing or wrong API key; 401
	EFORBIDDEN      = "forbidden"              // authenticated but not allowed; 403
	ENOTFOUND       = "not_found"              // missing, or not the caller's; 404
	ECONFLICT       = "conflict"               // state conflict (wrong tool_use_id, ...); 409
	ETURNINPROGRESS = "turn_in_progress"       // a turn is already running on the session; 409
	ETOOLARGE       = "payload_too_large"      // body over the limit; 413
	EUNSUPPORTED    = "unsupported_media_type" // wrong Content-Type; 415
	EBUDGET         = "budget_exhausted"       // the user's token budget cannot cover the turn; 402
	ERATELIMITED    = "rate_limit_exceeded"    // the user's own request or message limit; 429
	EUPSTREAMBUSY   = "rate_limit"             // upstream 429/529: retry in a few seconds; 503
	EUPSTREAMAUTH   = "auth"                   // upstream rejected our credentials; 502
	EAPI            = "api_error"              // other upstream failure; 502
	ETIMEOUT        = "timeout"                // a deadline passed; 504
	EINTERNAL       = "internal"               // a bug or an unexpected failure; 500
	EUNAVAILABLE    = "unavailable"            // the database cannot be reached for now (restart, failover): retry; 503
)

// FieldError names one problem with one input field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Code    string `json:"code"`
}

// String renders the problem as "field: message", or the message alone
// when it concerns no single field (an empty body, a request as a whole).
func (e FieldError) String() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + ": " + e.Message
}

// Error is a domain error with a code that maps to an HTTP status and a
// message that is safe to show to the caller.
type Error struct {
	Code       string
	Message    string
	Details    []FieldError
	Retryable  bool
	RetryAfter time.Duration
	// Extra carries code-specific fields for the wire (for example usage and
	// limit on rate_limit_exceeded).
	Extra map[string]any
	Err   error // the cause, never shown to callers
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("coachd: %s: %s: %v", e.Code, e.Message, e.Err)
	}
	return fmt.Sprintf("coachd: %s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up, as the
// Retry-After header and the wire dialects carry it; 0 when none was given.
func (e *Error) RetryAfterSeconds() int64 {
	if e.RetryAfter <= 0 {
		return 0
	}
	return int64((e.RetryAfter + time.Second - 1) / time.Second)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error that lists field problems.
func Invalid(details ...FieldError) *Error {
	msg := "invalid request"
	if len(details) == 1 {
		msg = details[0].String()
	} else if len(details) > 1 {
		msg = fmt.Sprintf("%d invalid fields", len(details))
	}
	return &Error{Code: EINVALID, Message: msg, Details: details}
}

// ErrorCode returns the code of the first *Error in err's chain, EINTERNAL
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the caller-safe message of err: the message of an
// *Error, or a generic text for anything else.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// AsError returns err as an *Error, wrapping unknown errors as EINTERNAL.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return &Error{Code: EINTERNAL, Message: "internal error", Err: err}
}
