package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/coachd/coachd"
)

// ForeignMaxBodyBytes bounds the body of the routes whose clients resend
// every earlier message, photos and files too, though coachd has them
// stored and reads only the last message's (POST /v1/chat/completions, and
// POST /v1/chat/stream?protocol=ai-sdk from useChat): decodeByMessage
// reads past their data without keeping it, so a long photo chat goes on
// where ChatMaxBodyBytes would have refused it after a handful of photos.
// One message is still at most ChatMaxBodyBytes.
const ForeignMaxBodyBytes = 64 << 20

// OAIMaxBodyBytes is the body bound of POST /v1/chat/completions.
const OAIMaxBodyBytes = ForeignMaxBodyBytes

// decodeByMessage reads a JSON object body as it arrives, for a client
// whose format coachd does not define and which resends its whole chat.
// Each time its member "messages" (in any case, as encoding/json matches
// it) starts as an array, start is called; then each of its messages is
// handed to each as its raw JSON with its pointer, at most ChatMaxBodyBytes and with no NUL
// in any string. The other members are decoded into
// v at the end, with encoding/json's rules and NUL refused, so that v
// reads as decodeForeign would have read it (v's messages field is left
// to the callbacks). bad is the answer to a body that is not the JSON
// expected.
func decodeByMessage(r *http.Request, v any, bad error, start func(), each func(at jsontext.Pointer, msg []byte) error) error {
	failed := func(err error) error {
		if e := bodyLimitError(err); e != nil {
			return e
		}
		return bad
	}
	dec := jsontext.NewDecoder(r.Body, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return failed(err)
	}
	rest := []byte{'{'} // the members but messages, decoded together at the end
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return failed(err)
		}
		name := tok.String()
		if strings.EqualFold(name, "messages") && dec.PeekKind() == '[' {
			dec.ReadToken()
			start()
			for i := 0; dec.PeekKind() != ']'; i++ {
				msg, err := dec.ReadValue()
				if err != nil {
					return failed(err)
				}
				at := jsontext.Pointer("").AppendToken(name).AppendToken(strconv.Itoa(i))
				if len(msg) > ChatMaxBodyBytes {
					return coachd.Errorf(coachd.ETOOLARGE, "%s is larger than %d bytes", fieldPath(at), ChatMaxBodyBytes)
				}
				if err := noNULAt(at, msg); err != nil {
					return err
				}
				if err := each(at, msg); err != nil {
					return err
				}
			}
			if _, err := dec.ReadToken(); err != nil {
				return failed(err)
			}
			continue
		}
		val, err := dec.ReadValue()
		if err != nil {
			return failed(err)
		}
		if err := noNULAt(jsontext.Pointer("").AppendToken(name), val); err != nil {
			return err
		}
		if len(rest) > 1 {
			rest = append(rest, ',')
		}
		rest, _ = jsontext.AppendQuote(rest, name)
		rest = append(append(rest, ':'), val...)
	}
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '}' {
		return failed(err)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return failed(err) // trailing data, as json.Unmarshal refuses it
	}
	return foreignUnmarshal("", append(rest, '}'), v, bad)
}

// foreignUnmarshal is json.Unmarshal of data, the value at at of a
// foreign body, into v (a pointer). A value of the wrong JSON type is
// refused as strict bodies refuse it, naming its field (code "type");
// what else does not decode is bad.
func foreignUnmarshal(at jsontext.Pointer, data []byte, v any, bad error) error {
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	// encoding/json names no array index (parts.text), nor the field of
	// an UnmarshalJSON's refusal: json/v2 reads the value again, as
	// loosely, for its pointer, taken when it found the same problem.
	var sem *jsonv2.SemanticError
	fresh := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	if !errors.As(jsonv2.Unmarshal(data, fresh, foreignOptions), &sem) || sem.JSONPointer == "" {
		return bad
	}
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		var names []string
		for tok := range sem.JSONPointer.Tokens() {
			if _, err := strconv.Atoi(tok); err != nil {
				names = append(names, tok)
			}
		}
		if strings.Join(names, ".") != ute.Field {
			return bad
		}
	} else if sem.Err == nil || sem.Err.Error() != err.Error() {
		return bad
	}
	sem.JSONPointer = at + sem.JSONPointer
	e := coachd.AsError(semanticError(sem))
	if len(e.Details) != 1 || e.Details[0].Field == "" {
		return bad
	}
	e.Details[0].Code = "type" // an UnmarshalJSON's refusal is one too
	return e
}

// foreignOptions read a value as loosely as encoding/json does.
var foreignOptions = jsonv2.JoinOptions(
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
	jsonv2.MatchCaseInsensitiveNames(true),
)
