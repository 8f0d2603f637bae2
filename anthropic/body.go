package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/coachd/coachd"
)

// coachd writes the Messages request body itself, in one pass into one
// buffer, and hands it to the SDK whole (option.WithRequestBody). The
// SDK is still the client: it sets every header and auth, runs the
// platform middleware (Bedrock and Vertex rewrite this very body) and
// retries (re-sending these bytes); on a traced call it also sets the
// "stream" flag (which the body carries first already) and decodes the
// events its span follows (Model.Stream). Only the encoding
// moved: MessageNewParams.MarshalJSON walks the params by reflection and
// scans every block's JSON again to compact it, about a tenth of coachd's
// CPU under load, for a body that is mostly blocks coachd can write
// directly (Block.AppendJSON). The bytes are the ones the SDK wrote
// (TestBodyBytes and FuzzBody hold this encoder to it), but for the
// "stream" key coming first instead of last, so the upstream and its
// prompt cache see no change.

// bodyKind says which endpoint a body is for.
type bodyKind int

const (
	bodyMessages bodyKind = iota // POST /v1/messages, streamed
	bodyCount                    // POST /v1/messages/count_tokens
)

// A body gets a buffer of its own, never a pooled one: the SDK sends the
// bytes themselves (Model.Stream), and net/http may still read them after
// the response came back (a RoundTripper closes a request's body when it
// is done with it, possibly after RoundTrip returned). One allocation of
// about the body's size per request is the price: the buffer is sized
// from the Model's last body (bodyCap), with room for a history that grew
// since; a longer body grows it once. One very long body (images) does
// not make every next buffer as long: past maxBodyCap, bodies grow, but
// for the request's own attachments, which are counted in (bodyCap).
const (
	minBodyCap = 4 << 10
	maxBodyCap = 1 << 20
)

// bodyCap is the capacity of req's body's buffer: the Model's last
// body's (bounded), plus the request's attachments. A history's photos
// are megabytes of base64 on every round: grown to them by append (a
// quarter at a time past a few hundred KB), the buffer allocated about
// five times the body.
func (m *Model) bodyCap(req *coachd.ModelRequest) int {
	n := int(m.lastBody.Load())
	media := 0
	for _, msg := range req.Messages {
		for _, b := range msg.Blocks {
			if b.Type == coachd.BlockImage || b.Type == coachd.BlockDocument {
				media += len(b.Source)
			}
		}
	}
	return min(max(n+n/4, minBodyCap), maxBodyCap) + media
}

// appendBody appends the JSON body of req, with the fields, their order and
// their bytes as sdk.MessageNewParams (or MessageCountTokensParams) marshal
// them, "stream" first: keys in the SDK's struct order, blocks
// compacted, strings and raw JSON HTML-escaped as encoding/json does. req
// carries its cache marks already; markTool marks the last tool.
func (m *Model) appendBody(dst []byte, req *coachd.ModelRequest, kind bodyKind, markTool bool) ([]byte, error) {
	var err error
	sep := byte('{')
	key := func(k string) {
		dst = append(dst, sep, '"')
		dst = append(dst, k...)
		dst = append(dst, '"', ':')
		sep = ','
	}
	if kind == bodyMessages {
		// First, where the SDK's WithJSONSet("stream", true) finds it at
		// once: appended by the SDK, it scanned the whole body to find
		// that the key was not there (about 1.5 % of coachd's CPU under
		// load). Only the key's place differs from the SDK's own bytes.
		key("stream")
		dst = append(dst, "true"...)
		key("max_tokens")
		mt := req.MaxTokens
		if mt <= 0 {
			mt = DefaultMaxTokens
		}
		dst = strconv.AppendInt(dst, mt, 10)
	}
	if len(req.Messages) > 0 {
		key("messages")
		if dst, err = appendMessages(dst, req.Messages); err != nil {
			return dst, err
		}
	}
	key("model")
	dst = coachd.AppendJSONString(dst, string(m.model(req)), true)
	if kind == bodyMessages {
		if t := req.Temperature; t != nil {
			key("temperature")
			if dst, err = appendFloat(dst, *t); err != nil {
				return dst, err
			}
		}
		if req.UserID != "" && m.sendsUserID() {
			key("metadata")
			dst = append(dst, `{"user_id":`...)
			dst = coachd.AppendJSONString(dst, req.UserID, true)
			dst = append(dst, '}')
		}
		if len(req.StopSequences) > 0 {
			key("stop_sequences")
			for i, s := range req.StopSequences {
				dst = append(dst, elemSep(i))
				dst = coachd.AppendJSONString(dst, s, true)
			}
			dst = append(dst, ']')
		}
	}
	if len(req.System) > 0 {
		key("system")
		for i := range req.System {
			dst = append(dst, elemSep(i))
			b := &req.System[i]
			if b.Type == "" {
				return dst, coachd.Errorf(coachd.EINVALID, "system block %d: coachd: block without type", i)
			}
			if dst, err = appendBlock(dst, b); err != nil {
				return dst, coachd.Errorf(coachd.EINVALID, "system block %d: %v", i, err)
			}
		}
		dst = append(dst, ']')
	}
	if req.ThinkingBudget > 0 {
		key("thinking")
		dst = append(dst, `{"budget_tokens":`...)
		dst = strconv.AppendInt(dst, req.ThinkingBudget, 10)
		dst = append(dst, `,"type":"enabled"}`...)
	}
	if tc := req.ToolChoice; tc != nil {
		key("tool_choice")
		dst = append(dst, `{"type":`...)
		dst = coachd.AppendJSONString(dst, tc.Type, true)
		if tc.Name != "" {
			dst = append(dst, `,"name":`...)
			dst = coachd.AppendJSONString(dst, tc.Name, true)
		}
		if tc.DisableParallelToolUse {
			dst = append(dst, `,"disable_parallel_tool_use":true`...)
		}
		dst = append(dst, '}')
	}
	if len(req.Tools) > 0 {
		key("tools")
		for i := range req.Tools {
			dst = append(dst, elemSep(i))
			raw, err := m.tools.json(&req.Tools[i])
			if err != nil {
				return dst, err
			}
			if markTool && i == len(req.Tools)-1 {
				dst = append(dst, raw[:len(raw)-1]...)
				dst = append(dst, `,"cache_control":{"type":"ephemeral"}}`...)
				continue
			}
			dst = append(dst, raw...)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}'), nil
}

// appendMessages appends the messages array: each message is
// {"content":[…],"role":…}, either left out when empty, as the SDK's
// MessageParam (omitzero) writes it.
func appendMessages(dst []byte, msgs []coachd.ModelMessage) ([]byte, error) {
	var err error
	for i := range msgs {
		msg := &msgs[i]
		dst = append(dst, elemSep(i))
		sep := byte('{')
		if len(msg.Blocks) > 0 {
			dst = append(dst, `{"content":`...)
			sep = ','
			for j := range msg.Blocks {
				dst = append(dst, elemSep(j))
				b := &msg.Blocks[j]
				if b.Type == "" {
					return dst, coachd.Errorf(coachd.EINVALID, "message %d block %d: coachd: block without type", i, j)
				}
				if dst, err = appendBlock(dst, b); err != nil {
					return dst, coachd.Errorf(coachd.EINVALID, "message %d block %d: %v", i, j, err)
				}
			}
			dst = append(dst, ']')
		}
		if msg.Role != "" {
			dst = append(dst, sep)
			dst = append(dst, `"role":`...)
			dst = coachd.AppendJSONString(dst, string(msg.Role), true)
			sep = ','
		}
		if sep == '{' {
			dst = append(dst, '{')
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appendFloat writes f as encoding/json does; NaN and infinities are not
// JSON.
func appendFloat(dst []byte, f float64) ([]byte, error) {
	dst, ok := coachd.AppendJSONFloat(dst, f)
	if !ok {
		return dst, coachd.Errorf(coachd.EINVALID, "temperature: %v is not a number JSON can carry", f)
	}
	return dst, nil
}

// appendBlock appends b as the SDK wrote a block: Block.MarshalJSON,
// compacted and HTML-escaped. Block's typed strings come out of
// AppendJSONString in that form already; its raw JSON fields (input,
// content, source, Extra) are written as they are, so each is checked
// and, when it is not in that form, replaced by its compacted copy.
func appendBlock(dst []byte, b *coachd.Block) ([]byte, error) {
	in, err := cleanRaw(b.Input)
	if err != nil {
		return dst, err
	}
	content, err := cleanRaw(b.Content)
	if err != nil {
		return dst, err
	}
	source := b.Source
	if !b.SourceAsIs() { // an accepted photo's is known (LearnAttachment)
		if source, err = cleanRaw(b.Source); err != nil {
			return dst, err
		}
	}
	var extra map[string]json.RawMessage
	for k, v := range b.Extra {
		if k == "type" {
			continue // Block writes its own type, never Extra's
		}
		if len(v) == 0 {
			return dst, fmt.Errorf("%s: no JSON value", k)
		}
		c, err := cleanRaw(v)
		if err != nil {
			return dst, fmt.Errorf("%s: %w", k, err)
		}
		if len(c) != len(v) || &c[0] != &v[0] {
			if extra == nil {
				extra = make(map[string]json.RawMessage, len(b.Extra))
				for k2, v2 := range b.Extra {
					extra[k2] = v2
				}
			}
			extra[k] = c
		}
	}
	if same(in, b.Input) && same(content, b.Content) && same(source, b.Source) && extra == nil {
		return b.AppendJSON(dst)
	}
	c := *b
	c.Input, c.Content, c.Source = in, content, source
	if extra != nil {
		c.Extra = extra
	}
	return c.AppendJSON(dst)
}

// same reports whether a and b are the same bytes in memory.
func same(a, b json.RawMessage) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// ephemeral is the cache mark coachd.CacheMarks sets on up to four blocks
// of every request: known clean, not scanned.
var ephemeral = []byte(`{"type":"ephemeral"}`)

// cleanRaw returns raw if it is one JSON value, compact, with <, >, &,
// U+2028 and U+2029 escaped; otherwise that form of it in new memory, or
// an error when raw is not one JSON value. Most raw fields are in that
// form already (json.Marshal wrote them), and cost only the check.
func cleanRaw(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || bytes.Equal(raw, ephemeral) {
		return raw, nil
	}
	if !coachd.ValidJSON(raw) {
		// json.Compact's error says where.
		var b bytes.Buffer
		return nil, json.Compact(&b, raw)
	}
	if coachd.CleanJSON(raw) {
		return raw, nil
	}
	return coachd.AppendCleanJSON(make([]byte, 0, len(raw)+16), raw), nil
}

// elemSep is what goes before element i of an array: its '[' or a ','.
func elemSep(i int) byte {
	if i == 0 {
		return '['
	}
	return ','
}
