// Package sse writes a turn's coachd.Events to HTTP clients as Server-Sent
// Events, in one of three wire dialects:
//
//   - coachd (default): named events (message_start, content_delta, ...).
//   - asp: unnamed data lines {"type":"ack"|"text"|"tool"|...}, the ASP v2
//     stream.
//   - sage: unnamed data lines {text}, {toolCall}, {showOptions}, ... ending
//     with data: [DONE].
//
// The encoders are pure functions from an event to bytes; Writer adds the
// HTTP side (headers, flushing, heartbeats, disconnects). Every payload is
// compact JSON built from structs, so the output for an event is
// byte-for-byte deterministic, and JSON escapes CR and LF, so a data line
// never breaks.
package sse

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/coachd/coachd"
)

// Dialects, as chosen with ?protocol=.
const (
	Coachd = "coachd"
	ASP    = "asp"
	Sage   = "sage"
)

// ValidDialect reports whether s names a dialect.
func ValidDialect(s string) bool {
	switch s {
	case Coachd, ASP, Sage, AISDK:
		return true
	}
	return false
}

// Encode appends the wire bytes of ev in dialect to dst and returns the
// extended slice. Events a dialect has no form for append nothing; so does
// an unknown dialect. The empty dialect is coachd.
func Encode(dst []byte, dialect string, ev coachd.Event) []byte {
	switch dialect {
	case Coachd, "":
		return encodeCoachd(dst, ev)
	case ASP:
		return encodeASP(dst, ev)
	case Sage:
		return encodeSage(dst, ev)
	}
	return dst
}

// Done returns the bytes that close a stream in dialect: the [DONE]
// sentinel for sage, nothing for the others.
func Done(dialect string) []byte {
	if dialect == Sage || dialect == AISDK {
		return []byte("data: [DONE]\n\n")
	}
	return nil
}

// stopMessages say why a loop stopped early, for the dialects whose
// clients expect an error then (asp, sage); coachd's message_end carries
// the stop reason itself.
var stopMessages = map[string]string{
	coachd.TurnMaxRounds:   "Tool loop exceeded MAX_STEPS",
	coachd.TurnToolLimit:   "Tool loop exceeded its tool call limit",
	coachd.TurnCircuitOpen: "Multiple tool executions failed. Please try again.",
	coachd.TurnDeadline:    "The turn took longer than its time limit",
	coachd.TurnMaxTokens:   "The reply reached its length limit",
	coachd.TurnSessionFull: "The session is full: start a new session",
	// agent.TurnBudget (reserve: max), spelt as the error code it is.
	coachd.EBUDGET: "Token budget exhausted: the turn stopped before a round its reservation could not cover",
}

// sageWrapUp is what seed 002's loop says when its 55 s guard fires.
const sageWrapUp = "\n\n[Wrapping up — session took longer than expected.]"

// abnormalStop appends what dialect sends before the end of a turn that
// stopped early and sent no error: an error (code = the stop reason), or
// for sage's deadline the seed's wrap-up text.
func abnormalStop(dst []byte, dialect, stop string) []byte {
	msg, ok := stopMessages[stop]
	switch {
	case !ok || dialect == Coachd:
		return dst
	case dialect == Sage && stop == coachd.TurnDeadline:
		return frame(dst, "", sageText{sageWrapUp})
	}
	return Encode(dst, dialect, coachd.Event{Type: coachd.EventError, Err: &coachd.Error{Code: stop, Message: msg}})
}

// ping is the heartbeat: an SSE comment line, ignored by clients.
var ping = []byte(": ping\n\n")

// frame appends one SSE frame: an optional event name and one data line.
func frame(dst []byte, name string, v any) []byte {
	if name != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, name...)
		dst = append(dst, '\n')
	}
	dst = append(dst, "data: "...)
	dst = appendJSON(dst, v)
	return append(dst, "\n\n"...)
}

// appendJSON appends v as compact JSON without HTML escaping. The payload
// types cannot fail to encode (raw fields pass through rawOr, error extras
// are checked one by one), so a failure is a bug; it degrades to {} rather
// than a broken frame.
func appendJSON(dst []byte, v any) []byte {
	if out, ok := appendJSONStrict(dst, v); ok {
		return out
	}
	return append(dst, "{}"...)
}

// appendJSONStrict is appendJSON that reports whether v encoded. It
// encodes straight onto dst (this runs for every streamed delta); the
// encoder writes nothing when v fails to encode, so dst is intact then.
func appendJSONStrict(dst []byte, v any) ([]byte, bool) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

// rawOr returns raw when it is valid JSON, def otherwise, so that a bad
// tool input never breaks a frame. encoding/json compacts raw values, so
// newlines inside them never reach the wire.
func rawOr(raw json.RawMessage, def string) json.RawMessage {
	if len(raw) == 0 || !coachd.ValidJSON(raw) {
		return json.RawMessage(def)
	}
	return raw
}

// errorOf returns the event's error, or a generic internal error when an
// error event carries none.
func errorOf(ev coachd.Event) *coachd.Error {
	if ev.Err == nil {
		return &coachd.Error{Code: coachd.EINTERNAL, Message: "internal error"}
	}
	return ev.Err
}

// extraFields returns the error's code-specific fields in key order,
// leaving out names the fixed fields already use and values that do not
// encode as JSON.
func extraFields(e *coachd.Error, reserved ...string) []field {
	if len(e.Extra) == 0 {
		return nil
	}
	var out []field
	for _, k := range slices.Sorted(maps.Keys(e.Extra)) {
		if slices.Contains(reserved, k) {
			continue
		}
		if v, ok := appendJSONStrict(nil, e.Extra[k]); ok {
			out = append(out, field{k, v})
		}
	}
	return out
}

// field is one extra key and its encoded value.
type field struct {
	key   string
	value []byte
}

// withFields encodes v (a struct) and splices extra fields in before the
// closing brace, keeping the struct's fixed order first.
type withFields struct {
	v     any
	extra []field
}

func (w withFields) MarshalJSON() ([]byte, error) {
	base, ok := appendJSONStrict(nil, w.v)
	if !ok {
		return nil, fmt.Errorf("sse: encode %T", w.v)
	}
	if len(w.extra) == 0 {
		return base, nil
	}
	out := base[:len(base)-1] // drop '}'
	for _, f := range w.extra {
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendJSON(out, f.key)
		out = append(out, ':')
		out = append(out, f.value...)
	}
	return append(out, '}'), nil
}

// approval is a call waiting for the user's approval, as the coachd, asp
// and sage dialects carry it.
type approval struct {
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Reason    string          `json:"reason"`
}

func approvalOf(ev coachd.Event) approval {
	return approval{ev.ToolUseID, ev.ToolName, rawOr(ev.Input, "{}"), ev.Reason}
}

// withType is v's JSON object with "type" first (asp's frames).
type withType struct {
	Type string
	v    any
}

func (w withType) MarshalJSON() ([]byte, error) {
	body, ok := appendJSONStrict(nil, w.v)
	if !ok || len(body) < 2 || body[0] != '{' {
		return nil, fmt.Errorf("sse: %T is not a JSON object", w.v)
	}
	out, _ := appendJSONStrict(nil, w.Type)
	out = append([]byte(`{"type":`), out...)
	if len(body) > 2 {
		out = append(out, ',')
	}
	return append(out, body[1:]...), nil
}

// compactJSON is raw without insignificant space (raw itself when it is
// not valid JSON).
func compactJSON(raw json.RawMessage) []byte {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return raw
	}
	return b.Bytes()
}
