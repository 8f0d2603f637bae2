package anthropictest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/coachd/coachd"
)

// Event is one server-sent event: its name and its data, verbatim.
type Event struct {
	Name string
	Data []byte
}

// maxLine bounds one SSE line, as the SDK's own decoder does.
const maxLine = 32 << 20

// ParseSSE reads a text/event-stream body into events. Multi-line data is
// joined with "\n"; comment lines are skipped; an event without an event:
// line is named after its data's "type", as the real API always names
// them; a final event without its blank line is still dispatched.
func ParseSSE(r io.Reader) ([]Event, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var (
		out  []Event
		name string
		data bytes.Buffer
		has  bool
	)
	flush := func() {
		if !has {
			return
		}
		ev := Event{Name: name, Data: bytes.Clone(bytes.TrimSuffix(data.Bytes(), []byte("\n")))}
		if ev.Name == "" {
			var probe struct{ Type string }
			if json.Unmarshal(ev.Data, &probe) == nil && !strings.ContainsAny(probe.Type, "\r\n") {
				ev.Name = probe.Type
			}
		}
		out = append(out, ev)
		name, has = "", false
		data.Reset()
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			flush()
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "":
			// a comment
		case "event":
			name, has = string(value), true
		case "data":
			data.Write(value)
			data.WriteByte('\n')
			has = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("anthropictest: reading SSE: %w", err)
	}
	flush()
	return out, nil
}

// ReplayFile is a reply that serves an .sse file's events verbatim
// (whitespace padding included). A file that cannot be read becomes a 500
// naming the problem, so a test sees it.
func ReplayFile(path string) Reply {
	f, err := os.Open(path)
	if err != nil {
		return Reply{err: err}
	}
	defer f.Close()
	evs, err := ParseSSE(f)
	if err != nil {
		return Reply{err: fmt.Errorf("%s: %w", path, err)}
	}
	return Reply{Events: evs}
}

// writeEvent writes one event in the real server's framing.
func writeEvent(w io.Writer, ev Event, pad int) error {
	data := ev.Data
	lines := bytes.Count(data, []byte("\n")) + 1
	buf := make([]byte, 0, len("event: \n")+len(ev.Name)+lines*len("data: \n")+len(data)+pad+1)
	if ev.Name != "" {
		buf = append(buf, "event: "...)
		buf = append(buf, ev.Name...)
		buf = append(buf, '\n')
	}
	if pad > 0 && len(data) > 1 && data[len(data)-1] == '}' && lines == 1 {
		buf = append(buf, "data: "...)
		buf = append(buf, data[:len(data)-1]...)
		for range pad {
			buf = append(buf, ' ')
		}
		buf = append(buf, "}\n\n"...)
		_, err := w.Write(buf)
		return err
	}
	for {
		line, rest, more := bytes.Cut(data, []byte("\n"))
		buf = append(buf, "data: "...)
		buf = append(buf, line...)
		buf = append(buf, '\n')
		if !more {
			break
		}
		data = rest
	}
	buf = append(buf, '\n')
	_, err := w.Write(buf)
	return err
}

// assemble builds the final message of a recorded stream, for a client
// that asked for a non-streaming reply. Deliberately simple: it is the
// fake's view, not the adapter's (the adapter uses the SDK's accumulator).
func assemble(evs []Event) ([]byte, error) {
	var (
		msg     map[string]any
		content []map[string]any
		partial = map[int]*bytes.Buffer{}
	)
	for _, ev := range evs {
		var e struct {
			Type         string                     `json:"type"`
			Index        int                        `json:"index"`
			Message      map[string]any             `json:"message"`
			ContentBlock map[string]any             `json:"content_block"`
			Delta        map[string]json.RawMessage `json:"delta"`
			Usage        map[string]any             `json:"usage"`
		}
		if json.Unmarshal(ev.Data, &e) != nil {
			continue
		}
		switch e.Type {
		case "message_start":
			msg = e.Message
		case "content_block_start":
			content = append(content, e.ContentBlock)
		case "content_block_delta":
			if e.Index < 0 || e.Index >= len(content) {
				return nil, fmt.Errorf("anthropictest: delta for block %d of %d", e.Index, len(content))
			}
			cb := content[e.Index]
			var typ, s string
			json.Unmarshal(e.Delta["type"], &typ)
			switch typ {
			case "text_delta":
				json.Unmarshal(e.Delta["text"], &s)
				cb["text"] = fmt.Sprint(cb["text"]) + s
			case "thinking_delta":
				json.Unmarshal(e.Delta["thinking"], &s)
				cb["thinking"] = fmt.Sprint(cb["thinking"]) + s
			case "signature_delta":
				json.Unmarshal(e.Delta["signature"], &s)
				cb["signature"] = fmt.Sprint(cb["signature"]) + s
			case "input_json_delta":
				json.Unmarshal(e.Delta["partial_json"], &s)
				if partial[e.Index] == nil {
					partial[e.Index] = new(bytes.Buffer)
				}
				partial[e.Index].WriteString(s)
			}
		case "message_delta":
			if msg == nil {
				msg = map[string]any{}
			}
			for k, v := range e.Delta {
				var x any
				json.Unmarshal(v, &x)
				msg[k] = x
			}
			u, _ := msg["usage"].(map[string]any)
			if u == nil {
				u = map[string]any{}
			}
			for k, v := range e.Usage {
				u[k] = v
			}
			msg["usage"] = u
		}
	}
	if msg == nil {
		return nil, fmt.Errorf("anthropictest: stream has no message_start")
	}
	for i, buf := range partial {
		if json.Valid(buf.Bytes()) {
			content[i]["input"] = json.RawMessage(bytes.Clone(buf.Bytes()))
		}
	}
	if content == nil {
		content = []map[string]any{}
	}
	msg["content"] = content
	return json.Marshal(msg)
}

// messageReply turns a recorded non-streaming message into a scripted
// reply, so a client that asks for a stream gets the same message.
func messageReply(raw []byte) (Reply, error) {
	var m struct {
		ID           string            `json:"id"`
		Model        string            `json:"model"`
		Content      []json.RawMessage `json:"content"`
		StopReason   string            `json:"stop_reason"`
		StopSequence *string           `json:"stop_sequence"`
		Usage        coachd.Usage      `json:"usage"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return Reply{}, fmt.Errorf("anthropictest: recorded message: %w", err)
	}
	r := Reply{ID: m.ID, Model: m.Model, StopReason: m.StopReason, Usage: &m.Usage}
	if m.StopSequence != nil {
		r.StopSequence = *m.StopSequence
	}
	for _, c := range m.Content {
		var b coachd.Block
		if err := json.Unmarshal(c, &b); err != nil {
			return Reply{}, fmt.Errorf("anthropictest: recorded block: %w", err)
		}
		switch b.Type {
		case coachd.BlockText:
			r.Blocks = append(r.Blocks, TextBlock(b.Text, 0))
		case coachd.BlockThinking:
			r.Blocks = append(r.Blocks, BlockSpec{Type: b.Type, Text: b.Thinking, Signature: b.Signature})
		case coachd.BlockToolUse:
			r.Blocks = append(r.Blocks, ToolUse(b.ID, b.Name, string(b.Input)))
		case coachd.BlockRedactedThinking:
			r.Blocks = append(r.Blocks, Redacted(b.Data))
		default:
			r.Blocks = append(r.Blocks, BlockSpec{Type: b.Type, Raw: c})
		}
	}
	return r, nil
}
