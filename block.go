package coachd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Block types coachd knows. Any other type is kept as it came.
const (
	BlockText             = "text"
	BlockThinking         = "thinking"
	BlockRedactedThinking = "redacted_thinking"
	BlockToolUse          = "tool_use"
	BlockToolResult       = "tool_result"
	BlockImage            = "image"
	BlockDocument         = "document"
)

// Block is one content block of a message, as the Messages API defines it.
// The fields coachd reads are typed; every other field (citations,
// cache_control, fields the API adds tomorrow) is kept in Extra, and a block
// of a type coachd does not know keeps all its fields in Extra, so a block
// survives a store-and-load round trip unchanged in meaning.
type Block struct {
	Type string

	Text      string // text
	Thinking  string // thinking
	Signature string // thinking
	Data      string // redacted_thinking

	ID    string          // tool_use
	Name  string          // tool_use
	Input json.RawMessage // tool_use: a JSON object

	ToolUseID string          // tool_result
	Content   json.RawMessage // tool_result: a JSON string or an array of blocks
	IsError   bool            // tool_result

	Source json.RawMessage // image, document

	Extra map[string]json.RawMessage

	// facts is what LearnAttachment read of an attachment's Source (its
	// media type, sizes, a PDF's page count), for that source only. Never
	// sent: not in the block's JSON.
	facts *attachmentFacts
}

// known lists the typed fields of each known block type, in wire order.
var known = map[string][]string{
	BlockText:             {"text"},
	BlockThinking:         {"thinking", "signature"},
	BlockRedactedThinking: {"data"},
	BlockToolUse:          {"id", "name", "input"},
	BlockToolResult:       {"tool_use_id", "content", "is_error"},
	BlockImage:            {"source"},
	BlockDocument:         {"source"},
}

// TextBlock returns a text block.
func TextBlock(text string) Block { return Block{Type: BlockText, Text: text} }

// ToolResultBlock returns a tool_result block with string content.
func ToolResultBlock(toolUseID, content string, isError bool) Block {
	c, _ := json.Marshal(content)
	return Block{Type: BlockToolResult, ToolUseID: toolUseID, Content: c, IsError: isError}
}

// ResultText returns the text of a tool_result's content: the string itself,
// or the text blocks joined when the content is a list of blocks.
func (b Block) ResultText() string {
	if len(b.Content) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(b.Content, &s) == nil {
		return s
	}
	var blocks []Block
	if json.Unmarshal(b.Content, &blocks) != nil {
		return ""
	}
	var sb strings.Builder
	for _, c := range blocks {
		if c.Type == BlockText {
			sb.WriteString(c.Text)
		}
	}
	return sb.String()
}

// MarshalJSON writes the block's typed fields for its type, then Extra in
// key order. It appends into one buffer sized up front: a history of many
// blocks is encoded on every request and for every size estimate.
func (b Block) MarshalJSON() ([]byte, error) {
	if b.Type == "" {
		return nil, fmt.Errorf("coachd: block without type")
	}
	return b.appendJSON(make([]byte, 0, b.jsonSizeHint())), nil
}

// AppendJSON appends the block's JSON as MarshalJSON returns it, for
// callers that encode many blocks into one buffer. Like MarshalJSON it
// writes raw fields (Input, Content, Source, Extra) as they are: json.Marshal
// of a block also compacts them.
func (b *Block) AppendJSON(dst []byte) ([]byte, error) {
	if b.Type == "" {
		return dst, fmt.Errorf("coachd: block without type")
	}
	return b.appendJSON(dst), nil
}

// AsIs reports whether json.Marshal writes the block byte for byte as
// AppendJSON does: it has a type, and its raw fields are empty or valid
// JSON in the form json.Marshal writes (CleanJSON), every Extra value
// included, so the second pass json.Marshal makes over a MarshalJSON's
// output (compacting, escaping, checking) changes nothing. Stored and
// streamed blocks nearly always are; callers that would otherwise make
// that pass skip it.
func (b *Block) AsIs() bool {
	if b.Type == "" || !rawAsIs(b.Input) || !rawAsIs(b.Content) || !b.SourceAsIs() {
		return false
	}
	for k, v := range b.Extra {
		if k != "type" && (len(v) == 0 || !rawAsIs(v)) {
			return false
		}
	}
	return true
}

// rawAsIs reports whether raw is empty, or valid JSON that json.Marshal
// writes as it is.
func rawAsIs(raw []byte) bool {
	return len(raw) == 0 || CleanJSON(raw) && ValidJSON(raw)
}

// jsonSizeHint is about the size of the block's JSON when little needs
// escaping.
func (b *Block) jsonSizeHint() int {
	n := 64 + len(b.Type) + len(b.Text) + len(b.Thinking) + len(b.Signature) + len(b.Data) +
		len(b.ID) + len(b.Name) + len(b.Input) + len(b.ToolUseID) + len(b.Content) + len(b.Source)
	for k, v := range b.Extra {
		n += len(k) + len(v) + 4
	}
	return n + n/16
}

// appendJSON appends the block's JSON (b.Type is not empty). Strings are
// written as json.Marshal writes them, so the bytes are the same as when
// each field went through it.
func (b *Block) appendJSON(buf []byte) []byte {
	buf = append(buf, `{"type":`...)
	buf = appendJSONString(buf, b.Type)
	field := func(name, v string) {
		buf = append(buf, ',', '"')
		buf = append(buf, name...)
		buf = append(buf, '"', ':')
		buf = appendJSONString(buf, v)
	}
	rawField := func(name string, raw json.RawMessage, def string) {
		if len(raw) == 0 {
			if def == "" {
				return
			}
			raw = json.RawMessage(def)
		}
		buf = append(buf, ',', '"')
		buf = append(buf, name...)
		buf = append(buf, '"', ':')
		buf = append(buf, raw...)
	}
	switch b.Type {
	case BlockText:
		field("text", b.Text)
	case BlockThinking:
		field("thinking", b.Thinking)
		field("signature", b.Signature)
	case BlockRedactedThinking:
		field("data", b.Data)
	case BlockToolUse:
		field("id", b.ID)
		field("name", b.Name)
		rawField("input", b.Input, "{}")
	case BlockToolResult:
		field("tool_use_id", b.ToolUseID)
		rawField("content", b.Content, "")
		if b.IsError {
			buf = append(buf, `,"is_error":true`...)
		}
	case BlockImage, BlockDocument:
		rawField("source", b.Source, "")
	}
	if len(b.Extra) > 0 {
		keys := make([]string, 0, len(b.Extra))
		for k := range b.Extra {
			if k != "type" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			buf = append(buf, ',')
			buf = appendJSONString(buf, k)
			buf = append(buf, ':')
			buf = append(buf, b.Extra[k]...)
		}
	}
	return append(buf, '}')
}

// BlocksText joins the text of the text blocks: what a human reads.
func BlocksText(blocks []Block) string {
	var sb strings.Builder
	for _, b := range blocks {
		if b.Type == BlockText {
			sb.WriteString(b.Text)
		}
	}
	return sb.String()
}

// JSONOrString is s itself when it is a JSON object or array, otherwise s
// as a JSON string: a tool's result goes on the wire as the value it is
// (seed 000's client passes result objects on, not strings).
func JSONOrString(s string) json.RawMessage {
	if t := bytes.TrimSpace([]byte(s)); len(t) > 0 && (t[0] == '{' || t[0] == '[') && ValidJSON(t) {
		return t
	}
	b, _ := json.Marshal(s)
	return b
}
