package anthropic

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"unicode/utf8"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/respjson"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// The SDK decodes every event of a stream with json.Unmarshal into
// MessageStreamEventUnion, by reflection over gjson (about twenty
// allocations and tens of µs an event: 13 % of coachd's CPU under load).
// Most events of a reply are a handful of small shapes: a text, thinking,
// signature or input_json delta, a block's stop, the message's delta
// (stop reason, usage) and stop. When the SDK does not follow the stream
// itself (an OpenTelemetry span that records wraps the body, and then the
// SDK's decoder is used as before), sseReader reads the response body the
// SDK handed over, frame for frame as ssestream's decoder does, decodes
// those shapes by hand into the same union, and leaves every other event
// to json.Unmarshal into the union, as the SDK would. The union is then
// folded into the message as on the SDK's path (stream.accept,
// Message.Accumulate); the one difference is the message's own raw JSON
// (Message.RawJSON), which a hand-decoded message_delta does not update
// and coachd never reads. FuzzStreamDecode and TestDecodeSame hold the
// two paths to the same events, message and errors.

// sseReader reads the server-sent events of a text/event-stream body.
type sseReader struct {
	res     *http.Response
	scn     *bufio.Scanner // nil once released
	buf     *[]byte        // the scanner's first buffer, from scanBufs
	name    []byte         // the event's name ("event:")
	data    []byte         // its data lines, each ended by \n
	scratch []byte         // an escaped string's decoded bytes
	// unmarshaled: the SDK's decoder filled the event next returned last.
	unmarshaled bool
	// block is the content block of the content_block_start next returned
	// last when decode took it (start), for stream.accept to decode into
	// the message once; nil otherwise. It is data's, valid until the next
	// frame.
	block []byte
}

// tracedBody is the body of a response whose span follows the decoded
// events (the SDK's tracing.ResponseBody): the SDK must decode it.
type tracedBody interface {
	Unwrap() io.ReadCloser
	TraceEvents(ssestream.Decoder) ssestream.Decoder
}

// newSSEReader returns a reader of res's events, or nil when the SDK's own
// decoder must read them: no response (the call failed), a body the SDK's
// span follows, or a body that is not text/event-stream (a proxy's page,
// a content type with a decoder registered in ssestream). Bedrock's
// binary event stream arrives as text/event-stream: the SDK's Bedrock
// middleware translates it before anyone reads the body.
func newSSEReader(res *http.Response) *sseReader {
	if res == nil || res.Body == nil {
		return nil
	}
	if _, ok := res.Body.(tracedBody); ok {
		return nil
	}
	ct := res.Header.Get("content-type")
	if len(ct) < len("text/event-stream") || !strings.EqualFold(ct[:len("text/event-stream")], "text/event-stream") {
		return nil
	}
	buf := scanBufs.Get().(*[]byte)
	scn := bufio.NewScanner(res.Body)
	scn.Buffer((*buf)[:0], bufio.MaxScanTokenSize<<9) // the SDK's limit on a line
	return &sseReader{res: res, scn: scn, buf: buf}
}

// scanBufs are the scanners' first buffers: two streams a tool turn each
// allocated one, about 4 % of the bytes coachd allocated under load
// (BENCHMARKS.md). A line past it makes the scanner allocate a larger
// one of its own; the pooled one is then no longer in use.
var scanBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// release gives the scanner's buffer back once the stream is closed
// (stream.Close, on the goroutine reading it): the reader reads nothing
// more, and nothing it returned points into the buffer (frame copies each
// line into name and data).
func (r *sseReader) release() {
	if r.buf != nil {
		scanBufs.Put(r.buf)
		r.buf, r.scn = nil, nil
	}
}

// frame reads the next event's name and data, as ssestream's decoder
// does: lines up to an empty one; "event:" names the event, "data:" lines
// are joined each with its \n, comments and other fields are skipped, an
// event not ended by an empty line is dropped. It reports false at the end
// of the body or on a read error (scn.Err).
func (r *sseReader) frame() bool {
	r.name, r.data = r.name[:0], r.data[:0]
	if r.scn == nil {
		return false // released
	}
	for r.scn.Scan() {
		line := r.scn.Bytes()
		if len(line) == 0 {
			if len(r.name) == 0 && len(r.data) == 0 {
				continue
			}
			return true
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
		switch string(name) {
		case "event":
			r.name = append(r.name[:0], value...)
		case "data":
			r.data = append(r.data, value...)
			r.data = append(r.data, '\n')
		}
	}
	return false
}

// next returns the next event of the stream in ev, nil at the end of the
// body, or the error that ended it, with ssestream.Stream's rules: ping
// and unnamed events are skipped, as are events without data; an error
// event is the API error it carries.
//
// The hand decoder (decode) and the SDK's share ev: the SDK's fills any
// field of the union, decode only the ones it resets, so ev is cleared
// between an event the SDK decoded and one decode does.
func (r *sseReader) next(ev *sdk.MessageStreamEventUnion) (*sdk.MessageStreamEventUnion, error) {
	for r.frame() {
		switch string(r.name) {
		case "ping", "":
			continue
		case "error":
			return nil, r.apiError(r.data)
		}
		if len(bytes.TrimSuffix(r.data, []byte("\n"))) == 0 {
			continue
		}
		r.block = nil
		if r.unmarshaled {
			*ev = sdk.MessageStreamEventUnion{}
			r.unmarshaled = false
		}
		if r.decode(r.data, ev) {
			return ev, nil
		}
		*ev = sdk.MessageStreamEventUnion{}
		r.unmarshaled = true
		if err := json.Unmarshal(r.data, ev); err != nil {
			return nil, err
		}
		return ev, nil
	}
	if r.scn == nil {
		return nil, errReleased
	}
	return nil, r.scn.Err()
}

// errReleased is what a reader says when read after its stream closed.
var errReleased = errors.New("anthropic: read from a closed stream")

// apiError is the error an `event: error` carries, as the SDK builds it.
func (r *sseReader) apiError(data []byte) error {
	if r.res.Request == nil {
		return fmt.Errorf("received error while streaming: %s", string(data))
	}
	e := &sdk.Error{Request: r.res.Request, Response: r.res, StatusCode: r.res.StatusCode,
		RequestID: r.res.Header.Get("request-id"), WorkspaceID: r.res.Header.Get("anthropic-workspace-id")}
	if e.UnmarshalJSON(data) != nil {
		return fmt.Errorf("received error while streaming: %s", string(data))
	}
	return e
}

// decode sets ev's Type, Index and Delta from data when data is one of the
// hot events in its plain shape, with exactly the fields of that event:
//
//	{"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"…"}}
//	(thinking_delta/thinking, signature_delta/signature, input_json_delta/partial_json)
//	{"type":"content_block_stop","index":N}
//	{"type":"message_stop"}
//	{"type":"message_delta",…} (msgDelta)
//	{"type":"message_start","message":{…}} (msgStart)
//	{"type":"content_block_start","index":N,"content_block":{…}} (blockStart)
//
// in any key order and spacing. The strings are decoded as the SDK's
// decoder (gjson) decodes them; a surrogate escape, a negative or long
// index, an unknown or repeated key, null (but for message_delta's
// nullable fields, which msgDelta reads as the SDK does), or anything not
// valid JSON is left to the SDK (false). Only those fields are read of a
// union of these types (accept, Message.Accumulate).
func (r *sseReader) decode(data []byte, ev *sdk.MessageStreamEventUnion) bool {
	l := lexer{b: data}
	var typ, dtype, dkey, dval []byte
	var desc bool
	index := int64(-1)
	delta, usage := false, false
	var md msgDelta
	var ms msgStart
	var bs blockStart
	ok := l.object(func(key []byte) bool {
		switch string(key) {
		case "message":
			return !ms.seen && ms.read(&l)
		case "content_block":
			return bs.raw == nil && bs.read(&l)
		case "type":
			var esc bool
			return typ == nil && l.str(&typ, &esc) && !esc
		case "index":
			return index < 0 && l.index(&index)
		case "delta":
			if delta {
				return false
			}
			delta = true
			return l.object(func(key []byte) bool {
				var esc bool
				switch string(key) {
				case "type":
					return dtype == nil && l.str(&dtype, &esc) && !esc
				case "text", "thinking", "signature", "partial_json":
					dkey = key
					return dval == nil && l.str(&dval, &desc)
				}
				return md.deltaField(&l, key)
			})
		case "usage":
			if usage {
				return false
			}
			usage = true
			return l.object(func(key []byte) bool { return md.usageField(&l, key) })
		}
		return false
	})
	if !ok || l.skipSpace() != len(data) {
		return false
	}
	if ms.seen || bs.raw != nil {
		return r.start(typ, index, delta || usage || md.seen, &ms, &bs, ev)
	}
	if string(typ) == "message_delta" {
		return index < 0 && delta && usage && dtype == nil && dval == nil && r.messageDelta(&md, ev)
	}
	if usage || md.seen {
		return false
	}
	switch string(typ) {
	case "content_block_delta":
		if index < 0 || !delta {
			return false
		}
		var field *string
		var key, dt string // the value's key; dtype, interned
		switch string(dtype) {
		case "text_delta":
			field, key, dt = &ev.Delta.Text, "text", "text_delta"
		case "thinking_delta":
			field, key, dt = &ev.Delta.Thinking, "thinking", "thinking_delta"
		case "signature_delta":
			field, key, dt = &ev.Delta.Signature, "signature", "signature_delta"
		case "input_json_delta":
			field, key, dt = &ev.Delta.PartialJSON, "partial_json", "input_json_delta"
		default:
			return false
		}
		if dval == nil || string(dkey) != key {
			return false
		}
		reset(ev, "content_block_delta", index)
		ev.Delta.Type = dt
		*field = r.text(dval, desc)
	case "content_block_stop":
		if index < 0 || delta {
			return false
		}
		reset(ev, "content_block_stop", index)
	case "message_stop":
		if index >= 0 || delta {
			return false
		}
		reset(ev, "message_stop", 0)
	default:
		return false
	}
	return true
}

// reset makes ev an event of type typ at index, with no delta or usage.
func reset(ev *sdk.MessageStreamEventUnion, typ string, index int64) {
	ev.Type, ev.Index = typ, index
	ev.Delta.Type, ev.Delta.Text, ev.Delta.Thinking, ev.Delta.Signature, ev.Delta.PartialJSON = "", "", "", "", ""
	ev.Delta.StopReason, ev.Delta.StopSequence, ev.Usage = "", "", sdk.MessageDeltaUsage{}
}

// msgDelta is what a message_delta in its plain shape carries:
//
//	{"type":"message_delta",
//	 "delta":{"stop_reason":"end_turn"|null,"stop_sequence":"…"|null[,"stop_details":null]},
//	 "usage":{"output_tokens":N[,"input_tokens":N][,"cache_creation_input_tokens":N]
//	          [,"cache_read_input_tokens":N][,"server_tool_use":null][,"output_tokens_details":null]}}
//
// Any other field, or a value of another kind (stop details, a server
// tool count, a negative or long count), is left to the SDK.
type msgDelta struct {
	seen                bool // a message_delta field was read
	stopReason, stopSeq []byte
	stopSeqEsc          bool
	fields              fieldSet
	tokens              [4]int64
	raw                 [4][]byte // each count's digits; nil: absent
}

// The counts' order in msgDelta.tokens.
var usageKeys = [4]string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"}

func (md *msgDelta) once(bit uint) bool {
	md.seen = true
	return md.fields.once(bit)
}

// deltaField reads a message_delta's delta member key.
func (md *msgDelta) deltaField(l *lexer, key []byte) bool {
	var esc bool
	switch string(key) {
	case "stop_reason":
		return md.once(0) && (l.null() || l.str(&md.stopReason, &esc) && !esc)
	case "stop_sequence":
		return md.once(1) && (l.null() || l.str(&md.stopSeq, &md.stopSeqEsc))
	case "stop_details":
		return md.once(2) && l.null()
	}
	return false
}

// usageField reads a message_delta's usage member key.
func (md *msgDelta) usageField(l *lexer, key []byte) bool {
	for i, k := range usageKeys {
		if string(key) == k {
			start := l.skipSpace()
			if !md.once(uint(3+i)) || !l.index(&md.tokens[i]) {
				return false
			}
			md.raw[i] = l.b[start:l.i]
			return true
		}
	}
	switch string(key) {
	case "server_tool_use":
		return md.once(7) && l.null()
	case "output_tokens_details":
		return md.once(8) && l.null()
	}
	return false
}

// messageDelta sets ev to the message_delta md read. Message.Accumulate
// takes a count whose field is present (respjson.Field.Valid), and the
// output count always; the message's raw JSON, which coachd never reads,
// is left as message_start wrote it.
func (r *sseReader) messageDelta(md *msgDelta, ev *sdk.MessageStreamEventUnion) bool {
	reset(ev, "message_delta", 0)
	ev.Delta.StopReason = sdk.StopReason(md.stopReason)
	if md.stopSeq != nil {
		ev.Delta.StopSequence = r.text(md.stopSeq, md.stopSeqEsc)
	}
	u := &ev.Usage
	counts := [4]*int64{&u.InputTokens, &u.CacheCreationInputTokens, &u.CacheReadInputTokens, &u.OutputTokens}
	fields := [4]*respjson.Field{&u.JSON.InputTokens, &u.JSON.CacheCreationInputTokens, &u.JSON.CacheReadInputTokens, &u.JSON.OutputTokens}
	for i := range counts {
		if md.raw[i] != nil {
			*counts[i], *fields[i] = md.tokens[i], respjson.NewField(string(md.raw[i]))
		}
	}
	return true
}

// text is the string raw holds (between its quotes), unescaped as gjson
// does; lexer.str has checked every escape.
func (r *sseReader) text(raw []byte, esc bool) string {
	if !esc {
		return string(raw)
	}
	b := r.scratch[:0]
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			b = utf8.AppendRune(b, hex4(raw[i+1:i+5]))
			i += 4
		default: // " \ /
			b = append(b, raw[i])
		}
	}
	r.scratch = b
	return string(b)
}
