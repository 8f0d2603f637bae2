package coachd

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
)

// Blocks that an app records (POST /v1/chat/record) are sent back to the
// Messages API on every later turn of the session, so one block the API
// refuses breaks the session for good (issue 20 finding 9). RecordBlocks
// makes what it can safe to replay and CheckBlocks applies the API's rules
// to the rest, before anything is stored.

var (
	// toolUseIDRe is the API's pattern for tool_use ids, with a length
	// bound.
	toolUseIDRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,200}$`)
	// toolNameRe is the API's pattern for tool names.
	toolNameRe = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
)

// ValidToolUseID reports whether id is a tool_use id the Messages API
// takes (letters, digits, _ and -, at most 200).
func ValidToolUseID(id string) bool { return toolUseIDRe.MatchString(id) }

// imageMediaTypes are the image types the Messages API accepts.
var imageMediaTypes = []string{"image/jpeg", "image/png", "image/gif", "image/webp"}

// blockExtras are the optional API fields a recorded block may carry
// besides its typed ones, each with the check of its value (null stands
// for absent). cache_control is left out on purpose: coachd places its
// own cache breakpoints, and recorded ones would count against the API's
// limit of four on every later request.
var blockExtras = map[string]map[string]extraCheck{
	BlockText: {"citations": {"must be a list of citations", isList}},
	BlockDocument: {
		"citations": {`must be {"enabled": true} or {"enabled": false}`, isCitationsFlag},
		"context":   {"must be a string", isString},
		"title":     {"must be a string", isString},
	},
}

// extraCheck is what an extra field's value must be: ok says whether raw
// (valid JSON, not null) is that.
type extraCheck struct {
	msg string
	ok  func(raw json.RawMessage) bool
}

func isString(raw json.RawMessage) bool { return raw[0] == '"' }

func isList(raw json.RawMessage) bool {
	var items []map[string]json.RawMessage
	return json.Unmarshal(raw, &items) == nil
}

// isCitationsFlag: a document's citations, {"enabled": bool}, the key
// spelled as the API spells it (encoding/json would match "ENABLED" to a
// struct's field too).
func isCitationsFlag(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil || len(fields) != 1 {
		return false
	}
	v := string(fields["enabled"])
	return v == "true" || v == "false"
}

// CheckBlocks reports every block of a message sent by role that the
// Messages API would refuse in a request's history, or that coachd cannot
// vouch for. Fields are named from the list: "[1].input".
//
//   - types: text, tool_use, tool_result, image and document. thinking and
//     redacted_thinking are refused: their signature cannot be checked
//     here, and a forged one makes the API refuse every later turn (the
//     API does not need thinking blocks of earlier turns);
//   - text is not blank; tool_use only from the assistant, with a
//     well-formed id and name and an object input; tool_result only from
//     the user, answering a well-formed id with a string or a list of
//     text, image and document blocks;
//   - images are base64 in a type the API accepts, documents base64 PDF or
//     plain text: never a URL, which could fail on a later turn;
//   - no fields the API does not define for the type.
func CheckBlocks(role Role, blocks []Block) []FieldError {
	var errs []FieldError
	for i, b := range blocks {
		errs = append(errs, checkBlock(role, b, fmt.Sprintf("[%d]", i), false)...)
	}
	return errs
}

// RecordBlocks returns the blocks of a message an app records (POST
// /v1/chat/record) as coachd stores them, and CheckBlocks's problems with
// them, named by their index as sent. Seed 000's loop records the SDK's
// messages as they are, so what can be made safe to replay is, instead of
// refused:
//
//   - an assistant's thinking and redacted_thinking blocks are left out:
//     their signature cannot be checked, and the API does not need an
//     earlier turn's thinking (a user's are still refused);
//   - a text block that is empty or whitespace is left out, and a text
//     block's citations are: what they point at (a document's index, a
//     search result) cannot be checked against the history, one the API
//     refuses would break every later turn, and the API does not need an
//     earlier turn's citations;
//   - a tool_result whose content is a JSON value other than a string or
//     a list of blocks (seed 000's result object) gets that value's JSON
//     text as its content, and null content is left out.
//
// The result may be empty: the caller decides what an empty message is.
func RecordBlocks(role Role, blocks []Block) ([]Block, []FieldError) {
	out := make([]Block, 0, len(blocks))
	var errs []FieldError
	for i, b := range blocks {
		switch {
		case role == RoleAssistant && (b.Type == BlockThinking || b.Type == BlockRedactedThinking):
			continue
		case b.Type == BlockText && strings.TrimSpace(b.Text) == "":
			continue
		case b.Type == BlockText && b.Extra["citations"] != nil && string(b.Extra["citations"]) != "null":
			b.Extra = maps.Clone(b.Extra)
			delete(b.Extra, "citations")
			if len(b.Extra) == 0 {
				b.Extra = nil
			}
		case b.Type == BlockToolResult:
			b.Content = resultContent(b.Content)
		}
		errs = append(errs, checkBlock(role, b, fmt.Sprintf("[%d]", i), false)...)
		out = append(out, b)
	}
	return out, errs
}

// resultContent is a recorded tool_result's content as the API takes it:
// a string or a list of blocks as it is, null as absent, any other value
// as its JSON text.
func resultContent(raw json.RawMessage) json.RawMessage {
	c := bytes.TrimSpace(raw)
	switch {
	case len(c) == 0 || c[0] == '"' || blockList(c) || !json.Valid(c):
		return raw // checkBlock refuses what is not valid
	case string(c) == "null":
		return nil
	}
	var compact bytes.Buffer
	json.Compact(&compact, c)
	text, _ := json.Marshal(compact.String())
	return text
}

// blockList reports whether raw is a JSON list meant as content blocks,
// to be checked as such: empty, or with an object of a block type among
// its items. Any other list is data (a tool's rows, which may have a
// "type" of their own).
func blockList(raw json.RawMessage) bool {
	var items []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &items) != nil {
		return false
	}
	for _, it := range items {
		var fields map[string]json.RawMessage
		var typ string
		if json.Unmarshal(it, &fields) == nil && json.Unmarshal(fields["type"], &typ) == nil && known[typ] != nil {
			return true
		}
	}
	return len(items) == 0
}

// checkBlock checks one block; nested is true inside a tool_result.
func checkBlock(role Role, b Block, at string, nested bool) []FieldError {
	var errs []FieldError
	fail := func(field, msg, code string) {
		errs = append(errs, FieldError{Field: at + "." + field, Message: msg, Code: code})
	}
	switch b.Type {
	case BlockText:
		if strings.TrimSpace(b.Text) == "" {
			fail("text", "must contain non-whitespace text", "required")
		}
	case BlockImage:
		checkSource(b.Source, fail, func(s blockSource) (string, string) {
			if s.Type != "base64" {
				return "type", "must be base64: coachd stores the image itself, as a URL could fail on a later turn"
			}
			if !slices.Contains(imageMediaTypes, s.MediaType) {
				return "media_type", "must be " + strings.Join(imageMediaTypes, ", ")
			}
			return "", ""
		})
	case BlockDocument:
		checkSource(b.Source, fail, func(s blockSource) (string, string) {
			switch {
			case s.Type == "base64" && s.MediaType != "application/pdf":
				return "media_type", "must be application/pdf for a base64 document"
			case s.Type == "text" && s.MediaType != "text/plain":
				return "media_type", "must be text/plain for a text document"
			case s.Type != "base64" && s.Type != "text":
				return "type", "must be base64 or text: coachd stores the document itself, as a URL could fail on a later turn"
			}
			return "", ""
		})
	case BlockToolUse, BlockToolResult:
		if nested {
			fail("type", "must be text, image or document inside a tool_result", "enum")
			return errs
		}
		if b.Type == BlockToolUse {
			checkToolUse(role, b, fail)
		} else {
			errs = append(errs, checkToolResult(role, b, at, fail)...)
		}
	case BlockThinking, BlockRedactedThinking:
		fail("type", "cannot be recorded: coachd cannot check a thinking block's signature, and the API refuses a forged one on every later turn; leave thinking blocks out", "unsupported")
		return errs
	default:
		fail("type", "must be text, tool_use, tool_result, image or document", "enum")
		return errs
	}
	keys := slices.Sorted(maps.Keys(b.Extra))
	for _, k := range keys {
		check, known := blockExtras[b.Type][k]
		raw := bytes.TrimSpace(b.Extra[k])
		switch {
		case k == "cache_control":
			fail(k, "cannot be recorded: coachd places the cache breakpoints", "unknown")
		case !known:
			fail(k, "unknown field", "unknown")
		case len(raw) == 0 || string(raw) == "null":
		case !check.ok(raw):
			fail(k, check.msg, "type")
		}
	}
	return errs
}

func checkToolUse(role Role, b Block, fail func(field, msg, code string)) {
	if role != RoleAssistant {
		fail("type", "tool_use blocks can only be in assistant messages", "role")
	}
	if !toolUseIDRe.MatchString(b.ID) {
		fail("id", "must be 1 to 200 letters, digits, '_' or '-'", "format")
	}
	if !toolNameRe.MatchString(b.Name) {
		fail("name", "must be 1 to 64 letters, digits, '_' or '-'", "format")
	}
	if in := bytes.TrimSpace(b.Input); len(in) > 0 && in[0] != '{' {
		fail("input", "must be a JSON object", "type")
	}
}

// checkToolResult checks a tool_result and returns the problems of the
// blocks in its content.
func checkToolResult(role Role, b Block, at string, fail func(field, msg, code string)) []FieldError {
	if role != RoleUser {
		fail("type", "tool_result blocks can only be in user messages", "role")
	}
	if !toolUseIDRe.MatchString(b.ToolUseID) {
		fail("tool_use_id", "must be 1 to 200 letters, digits, '_' or '-'", "format")
	}
	content := bytes.TrimSpace(b.Content)
	if len(content) == 0 || content[0] == '"' {
		return nil
	}
	var inner []Block
	if content[0] != '[' || json.Unmarshal(content, &inner) != nil {
		fail("content", "must be a string or an array of text, image and document blocks", "type")
		return nil
	}
	var errs []FieldError
	for j, c := range inner {
		errs = append(errs, checkBlock(RoleUser, c, fmt.Sprintf("%s.content[%d]", at, j), true)...)
	}
	return errs
}

// blockSource is the source of an image or document.
type blockSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// sourceKeys reports whether every key of the source object raw is one of
// blockSource's as the API spells it: the decoder that fills blockSource
// matches keys in any case ("MEDIA_TYPE", "Data"), which the API would
// take for unknown fields.
func sourceKeys(raw json.RawMessage) bool {
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	for k := range fields {
		if k != "type" && k != "media_type" && k != "data" {
			return false
		}
	}
	return true
}

// checkSource reads a base64 or text source, lets rule refuse its type or
// media type, and checks its data.
func checkSource(raw json.RawMessage, fail func(field, msg, code string), rule func(blockSource) (field, msg string)) {
	if len(raw) == 0 {
		fail("source", "is required", "required")
		return
	}
	var s blockSource
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil || s.Type == "" || !sourceKeys(raw) {
		// A URL source has a url field: name its type, the actual problem.
		var typed struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &typed) == nil && typed.Type != "" && typed.Type != "base64" && typed.Type != "text" {
			s = blockSource{Type: typed.Type}
		} else {
			fail("source", "must be an object with type, media_type and data", "type")
			return
		}
	}
	if field, msg := rule(s); field != "" {
		fail("source."+field, msg, "enum")
		return
	}
	switch {
	case s.Data == "":
		fail("source.data", "is required", "required")
	case s.Type == "text" && len(s.Data) > MaxTextAttachmentBytes:
		// Re-sent on every later turn, as an attached text file is.
		fe := textTooLong("", len(s.Data))
		fail("source.data", fe.Message, fe.Code)
	case s.Type == "text" && !isPlainText([]byte(s.Data)):
		fail("source.data", "must be plain text: no NUL, no control characters but tab and line breaks, no invisible bidi overrides", "format")
	case s.Type == "base64":
		data, err := base64.StdEncoding.DecodeString(s.Data)
		if err != nil {
			fail("source.data", "must be base64", "format")
			return
		}
		// The API reads the bytes on every later turn: what it would
		// refuse (a type they are not, an image it cannot read or too
		// large a side) is refused here, as an attachment is.
		if fe := CheckAttachment(s.MediaType, data); fe != nil {
			fail("source."+fe.Field, fe.Message, fe.Code)
		}
	}
}
