package openai

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
)

// apiErrorBody is the error shape OpenAI, vLLM, Ollama and LiteLLM share:
// {"error": {"message", "type", "code"}}. code is a string for OpenAI and
// a number for vLLM and LiteLLM.
type apiErrorBody struct {
	Error *struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// redact takes key out of what the upstream said, should it quote it.
func (b *apiErrorBody) redact(key string) {
	if b.Error == nil {
		return
	}
	b.Error.Message = coachd.Redacted(b.Error.Message, key)
	b.Error.Type = coachd.Redacted(b.Error.Type, key)
	if code := coachd.Redacted(string(b.Error.Code), key); code != string(b.Error.Code) {
		b.Error.Code = json.RawMessage(code)
	}
}

// kind names the error for the message: its type, or its code.
func (b *apiErrorBody) kind() string {
	if b.Error == nil {
		return ""
	}
	if b.Error.Type != "" {
		return b.Error.Type
	}
	var s string
	if json.Unmarshal(b.Error.Code, &s) == nil {
		return s
	}
	return string(b.Error.Code)
}

// status is the HTTP status an in-stream error names in its code, if any.
func (b *apiErrorBody) status() int {
	if b.Error == nil {
		return 0
	}
	raw := strings.Trim(string(b.Error.Code), `"`)
	if n, err := strconv.Atoi(raw); err == nil && n >= 400 && n < 600 {
		return n
	}
	return 0
}

// busy reports whether an error's type or code says the upstream is out of
// capacity (a rate limit or an overload) rather than that the request was
// wrong. insufficient_quota arrives as a 429 but waiting does not cure it.
func busy(kind string) bool {
	k := strings.ToLower(kind)
	if strings.Contains(k, "quota") {
		return false
	}
	for _, w := range []string{"rate_limit", "ratelimit", "overload", "capacity", "unavailable", "throttl"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// statusError maps an HTTP error response to a coded error, the same way
// the Anthropic adapter maps its statuses: 429, 529 and 503 are a busy
// upstream (retryable, and a reason for an agent's fallback_model).
func statusError(status int, h http.Header, body []byte) *coachd.Error {
	var b apiErrorBody
	_ = json.Unmarshal(body, &b)
	kind := b.kind()
	out := &coachd.Error{Err: &httpError{status: status, kind: shown(kind), message: message(&b)}}
	switch {
	case status == http.StatusTooManyRequests && strings.Contains(strings.ToLower(kind), "quota"):
		out.Code, out.Message = coachd.EAPI, "model provider quota exhausted"
	case status == http.StatusTooManyRequests || status == 529 || status == http.StatusServiceUnavailable:
		out.Code, out.Message, out.Retryable = coachd.EUPSTREAMBUSY, "model is busy, retry in a few seconds", true
		out.RetryAfter = coachd.RetryAfter(h)
	case status == http.StatusBadRequest || status == http.StatusRequestEntityTooLarge || status == http.StatusUnprocessableEntity:
		out.Code, out.Message = coachd.EINVALID, "model rejected the request"
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		out.Code, out.Message = coachd.EUPSTREAMAUTH, "model rejected the credentials"
	case status == http.StatusNotFound:
		out.Code, out.Message = coachd.ENOTFOUND, "model or endpoint not found"
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		out.Code, out.Message = coachd.ETIMEOUT, "model request timed out"
	default:
		out.Code, out.Message = coachd.EAPI, "model request failed"
	}
	if kind != "" {
		out.Message += " (" + shown(kind) + ")"
	}
	return out
}

// streamError maps an error sent inside a 200 stream.
func streamError(b *apiErrorBody) *coachd.Error {
	if st := b.status(); st != 0 {
		return statusError(st, nil, mustJSON(b))
	}
	kind := b.kind()
	out := &coachd.Error{Code: coachd.EAPI, Message: "model stream failed",
		Err: &httpError{status: http.StatusOK, kind: shown(kind), message: message(b)}}
	if busy(kind) {
		out.Code, out.Message, out.Retryable = coachd.EUPSTREAMBUSY, "model is busy, retry in a few seconds", true
	}
	if kind != "" {
		out.Message += " (" + shown(kind) + ")"
	}
	return out
}

func mustJSON(v any) []byte {
	raw, _ := json.Marshal(v)
	return raw
}

func message(b *apiErrorBody) string {
	if b.Error == nil {
		return ""
	}
	// An upstream's message is for the log, bounded.
	return coachd.UpstreamText(b.Error.Message, coachd.MaxUpstreamText)
}

// shown is an error's kind as the client's message and the log show it:
// the provider chose it, so bounded and clean.
func shown(kind string) string {
	return coachd.UpstreamText(kind, coachd.MaxUpstreamKind)
}

// httpError is the upstream's answer, kept as the cause for the log.
type httpError struct {
	status  int
	kind    string
	message string
}

func (e *httpError) Error() string {
	return "openai-compatible API: " + strconv.Itoa(e.status) + " " + e.kind + ": " + e.message
}
