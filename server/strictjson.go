package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/coachd/coachd"
)

// Request bodies are read strictly (issue 20 findings 6 and 12).
// encoding/json repairs invalid UTF-8 silently, lets the last of two
// duplicate keys win and matches field names case-insensitively, so two
// readers of one body could disagree about what it says. The decoder is
// go-json-experiment/json (the Go team's encoding/json/v2, still behind
// GOEXPERIMENT in the standard library), whose defaults refuse all three;
// the one rule it lacks, no NUL in any string, is a token walk here,
// because PostgreSQL TEXT cannot hold U+0000.

// maxJSONDepth bounds the nesting of a request body. The deepest body
// coachd reads needs 7 levels (a record's tool_result content); tool
// inputs are free-form, and 64 is far beyond any a tool declares.
const maxJSONDepth = 64

// strictOptions are the decoder's rules, spelled out although they are
// its defaults: they are the contract of the API.
var strictOptions = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(false),
	jsontext.AllowInvalidUTF8(false),
	jsonv2.MatchCaseInsensitiveNames(false),
	jsonv2.RejectUnknownMembers(true),
)

// unmarshalStrict decodes body, which must hold exactly one JSON value,
// into v. It refuses invalid UTF-8 (lone surrogate escapes included),
// duplicate keys, keys that match a field only in another case, unknown
// fields, NUL characters in any string or key, and nesting deeper than
// maxJSONDepth: each an EINVALID error naming the field where it can.
func unmarshalStrict(body []byte, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return coachd.Invalid(coachd.FieldError{Message: "request body is empty; send a JSON object", Code: "required"})
	}
	if err := scanStrict(body); err != nil {
		return err
	}
	if err := jsonv2.Unmarshal(body, v, strictOptions); err != nil {
		return unmarshalError(body, err)
	}
	return nil
}

// scanStrict walks body's tokens once: the syntax, UTF-8, duplicate keys
// (all checked by the tokenizer), NUL characters, depth and trailing data.
func scanStrict(body []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(body), strictOptions)
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return unmarshalError(body, err)
		}
		if dec.StackDepth() > maxJSONDepth {
			return coachd.Invalid(coachd.FieldError{Field: fieldPath(dec.StackPointer()), Message: fmt.Sprintf("is nested deeper than %d levels", maxJSONDepth), Code: "depth"})
		}
		if tok.Kind() == '"' && strings.IndexByte(tok.String(), 0) >= 0 {
			return coachd.Invalid(coachd.FieldError{Field: fieldPath(dec.StackPointer()), Message: "must not contain NUL (U+0000) characters", Code: "nul"})
		}
		if dec.StackDepth() == 0 {
			break
		}
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return jsonError("", "must hold exactly one JSON value; found trailing data")
	}
	return nil
}

// unmarshalError turns a decoding error into a caller-safe coded error.
func unmarshalError(body []byte, err error) error {
	var (
		syn *jsontext.SyntacticError
		sem *jsonv2.SemanticError
	)
	switch {
	case errors.As(err, &syn):
		field := fieldPath(syn.JSONPointer)
		switch {
		case errors.Is(err, io.ErrUnexpectedEOF):
			return jsonError(field, "is truncated JSON")
		case errors.Is(syn.Err, jsontext.ErrDuplicateName):
			return coachd.Invalid(coachd.FieldError{Field: field, Message: "appears twice in one object", Code: "duplicate"})
		case badUnicodeAt(body, syn.ByteOffset):
			return coachd.Invalid(coachd.FieldError{Field: field, Message: "is not valid UTF-8", Code: "utf8"})
		}
		return jsonError(field, fmt.Sprintf("is malformed JSON at byte %d", syn.ByteOffset))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return jsonError("", "is truncated JSON")
	case errors.As(err, &sem):
		return semanticError(sem)
	}
	e := jsonError("", "could not be read as JSON")
	e.Err = err
	return e
}

// jsonError is a body that is not well-formed JSON, in the shape of every
// bad input: one detail, code "json", naming the value the JSON broke in,
// or none ("") when it is the body as a whole, which the message names.
func jsonError(field, msg string) *coachd.Error {
	if field == "" {
		msg = "request body " + msg
	}
	return coachd.Invalid(coachd.FieldError{Field: field, Message: msg, Code: "json"})
}

// badUnicodeAt reports whether the tokenizer stopped at off because of
// invalid UTF-8 or an escaped lone surrogate (\ud800), not a syntax error.
func badUnicodeAt(body []byte, off int64) bool {
	if off < 0 || off >= int64(len(body)) {
		return false
	}
	rest := body[off:]
	if r, size := utf8.DecodeRune(rest); r == utf8.RuneError && size <= 1 {
		return true
	}
	if len(rest) >= 6 && rest[0] == '\\' && rest[1] == 'u' {
		n, err := strconv.ParseUint(string(rest[2:6]), 16, 16)
		return err == nil && utf16.IsSurrogate(rune(n))
	}
	return false
}

// semanticError words a JSON value that does not fit the request's type.
func semanticError(e *jsonv2.SemanticError) error {
	field := fieldPath(e.JSONPointer)
	if errors.Is(e.Err, jsonv2.ErrUnknownName) {
		msg := "unknown field"
		if want := caseVariant(e.GoType, e.JSONPointer.LastToken()); want != "" {
			msg = fmt.Sprintf("unknown field; field names are case-sensitive: did you mean %q?", want)
		}
		return coachd.Invalid(coachd.FieldError{Field: field, Message: msg, Code: "unknown"})
	}
	if e.GoType == nil || e.JSONKind == 0 || (e.Err != nil && reflect.PointerTo(e.GoType).Implements(unmarshalerType)) {
		// An UnmarshalJSON method refused the value (a content block
		// without a type, say): its message is the domain's own.
		msg := "could not be read"
		if e.Err != nil {
			msg = strings.TrimPrefix(e.Err.Error(), "coachd: ")
		}
		if i := strings.Index(msg, "json: "); i >= 0 {
			msg = msg[:i] + "has the wrong JSON type" // not Go's type names
		}
		if field == "" {
			msg = "request body could not be read: " + msg
			return &coachd.Error{Code: coachd.EINVALID, Message: msg, Details: []coachd.FieldError{{Message: msg, Code: "invalid"}}, Err: e}
		}
		return coachd.Invalid(coachd.FieldError{Field: field, Message: msg, Code: "invalid"})
	}
	got := kindName(e.JSONKind)
	if e.JSONKind == '0' && len(e.JSONValue) > 0 {
		got = "number " + string(e.JSONValue)
	}
	if field == "" {
		return coachd.Invalid(coachd.FieldError{Message: "request body must be a JSON object, not " + got, Code: "type"})
	}
	return coachd.Invalid(coachd.FieldError{Field: field, Message: "must be " + jsonKind(e.GoType.Kind().String()) + ", not " + got, Code: "type"})
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// caseVariant returns the JSON name of t's field that name matches in
// another case, or "".
func caseVariant(t reflect.Type, name string) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return ""
	}
	for f := range t.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" {
			tag = f.Name
		}
		if f.IsExported() && tag != "-" && strings.EqualFold(tag, name) {
			return tag
		}
	}
	return ""
}

func kindName(k jsontext.Kind) string {
	switch k {
	case '"':
		return "string"
	case '0':
		return "number"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "a JSON value"
}

// fieldPath renders a JSON pointer the way field errors name fields:
// messages[0].content_blocks[1].text.
func fieldPath(p jsontext.Pointer) string {
	var sb strings.Builder
	for tok := range p.Tokens() {
		if _, err := strconv.ParseUint(tok, 10, 64); err == nil {
			sb.WriteString("[" + tok + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(tok)
	}
	return sb.String()
}
