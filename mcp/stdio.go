package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// StdioTransport is the SDK's stdio transport (one JSON-RPC message a
// line) over in and out, for `coachd mcp`, with its input read a line at
// a time first: a line that is not JSON, or longer than the SDK's frame
// limit, is answered with a parse error (-32700, id null), and one that
// is JSON but not a JSON-RPC message with an invalid request (-32600):
// the SDK would end the connection on either, unanswered. Good lines
// pass as they are. At the end of the input, the requests read before it
// are answered before the SDK hears of it: it would drop them.
func StdioTransport(in io.Reader, out io.Writer) sdk.Transport {
	return stdioTransport(in, out, sdk.DefaultMaxLineLength)
}

func stdioTransport(in io.Reader, out io.Writer, limit int) sdk.Transport {
	w := &lockedWriter{w: out}
	p := &pending{}
	p.cond.L = &p.mu
	pr, pw := io.Pipe()
	go func() {
		err := filterLines(in, asked{pw, p}, w, limit)
		if err == nil {
			p.drain()
		}
		pw.CloseWithError(err)
	}()
	// The lines are bounded here: the SDK's own bound is off (-1).
	return &sdk.IOTransport{Reader: pr, Writer: answers{w, p}, MaxLineLength: -1}
}

// pending counts the requests passed to the SDK that it has not answered:
// at the end of its input the SDK cancels those under way and writes
// nothing more, and a host that wrote its requests and closed stdin (a
// script piping them) got no answer at all. It keeps too the calls the
// host cancelled, whose answers the SDK writes all the same: the MCP
// spec asks that a cancelled request get no response.
type pending struct {
	mu        sync.Mutex
	cond      sync.Cond
	n         int
	cancelled map[jsonrpc.ID]bool
	closed    bool // the SDK's connection is closed: no answer will come
}

func (p *pending) add(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n += n
	if p.n <= 0 {
		p.cond.Broadcast()
	}
}

func (p *pending) cancel(id jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cancelled == nil {
		p.cancelled = map[jsonrpc.ID]bool{}
	}
	p.cancelled[id] = true
}

// dropped reports whether a line of n answers is the one answer to a
// cancelled call, id: if so it is counted, and not to be written.
func (p *pending) dropped(n int, id jsonrpc.ID) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n != 1 || !p.cancelled[id] {
		return false
	}
	delete(p.cancelled, id)
	p.n--
	if p.n <= 0 {
		p.cond.Broadcast()
	}
	return true
}

func (p *pending) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	p.cond.Broadcast()
}

// drain waits until every request passed on is answered, or the
// connection is closed (the bridge ends).
func (p *pending) drain() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.n > 0 && !p.closed {
		p.cond.Wait()
	}
}

// asked passes the filter's good lines to the SDK, counting their
// requests and noting the calls they cancel.
type asked struct {
	w io.Writer
	p *pending
}

func (a asked) Write(line []byte) (int, error) {
	n := 0
	for _, m := range messages(line) {
		req, ok := m.(*jsonrpc.Request)
		switch {
		case !ok:
		case req.IsCall():
			n++
		case req.Method == "notifications/cancelled":
			var c struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &c) == nil {
				if id, err := jsonrpc.MakeID(c.RequestID); err == nil && id.IsValid() {
					a.p.cancel(id)
				}
			}
		}
	}
	a.p.add(n)
	return a.w.Write(line)
}

// answers writes the SDK's lines out, counting its responses; the answer
// to a cancelled call is not written.
type answers struct {
	w *lockedWriter
	p *pending
}

func (a answers) Write(line []byte) (int, error) {
	n := 0
	var id jsonrpc.ID
	for _, m := range messages(line) {
		if resp, ok := m.(*jsonrpc.Response); ok {
			n, id = n+1, resp.ID
		}
	}
	if a.p.dropped(n, id) {
		return len(line), nil
	}
	k, err := a.w.Write(line)
	a.p.add(-n)
	return k, err
}

func (a answers) Close() error {
	a.p.close()
	return nil
}

// messages returns a line's messages (one, or a batch), those it can
// decode.
func messages(line []byte) []jsonrpc.Message {
	var raws []json.RawMessage
	if json.Unmarshal(line, &raws) != nil {
		raws = []json.RawMessage{line}
	}
	var msgs []jsonrpc.Message
	for _, raw := range raws {
		if m, err := jsonrpc.DecodeMessage(raw); err == nil {
			msgs = append(msgs, m)
		}
	}
	return msgs
}

// filterLines copies in's good lines to good and answers bad ones on w,
// until in ends (nil at EOF) or good is closed.
func filterLines(in io.Reader, good io.Writer, w io.Writer, limit int) error {
	br := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	long := false
	batches := true // until initialize names a protocol without them
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			line = append(line, chunk...)
			if len(line) > limit+1 { // +1: the newline
				line, long = line[:0], true
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return err
		}
		if long {
			writeError(w, nil, jsonrpc.CodeParseError, fmt.Sprintf("parse error: the line is longer than %d bytes", limit))
		} else if len(bytes.TrimSpace(line)) > 0 {
			if id, code, msg := check(line, batches); code != 0 {
				writeError(w, id, code, msg)
			} else {
				if v, ok := initialize(line); ok {
					batches = v == "2024-11-05" || v == "2025-03-26"
				}
				if _, werr := good.Write(line); werr != nil {
					return werr
				}
			}
		}
		line, long = line[:0], false
		if err == io.EOF {
			return nil
		}
	}
}

// check returns the JSON-RPC error a line is answered with (code 0: none)
// and the id to answer it with. A batch is refused unless batches are
// allowed: the SDK's transport ends the connection on one under protocol
// 2025-06-18 and later, which removed them.
func check(line []byte, batches bool) (id any, code int64, msg string) {
	if !json.Valid(line) {
		return nil, jsonrpc.CodeParseError, "parse error: the line is not JSON"
	}
	var msgs []json.RawMessage
	if json.Unmarshal(line, &msgs) != nil {
		msgs = []json.RawMessage{line}
	} else if len(msgs) == 0 {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: an empty batch"
	} else if !batches {
		return nil, jsonrpc.CodeInvalidRequest, "invalid request: JSON-RPC batches are not part of MCP since protocol version 2025-06-18; send each message on a line of its own"
	}
	for _, raw := range msgs {
		if _, err := jsonrpc.DecodeMessage(raw); err != nil {
			var m struct{ ID any }
			if json.Unmarshal(raw, &m) == nil && len(msgs) == 1 {
				switch m.ID.(type) {
				case string, float64:
					id = m.ID
				}
			}
			return id, jsonrpc.CodeInvalidRequest, "invalid request: " + err.Error()
		}
	}
	return nil, 0, ""
}

// initialize returns the protocol version a line's initialize request
// asks for. The SDK answers with that version when it knows it, and with
// a later one otherwise: only 2024-11-05 and 2025-03-26 keep batches.
func initialize(line []byte) (version string, ok bool) {
	if !bytes.Contains(line, []byte(`"initialize"`)) {
		return "", false
	}
	var m struct {
		Method string
		Params struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
	}
	if json.Unmarshal(line, &m) != nil || m.Method != "initialize" {
		return "", false
	}
	return m.Params.ProtocolVersion, true
}

func writeError(w io.Writer, id any, code int64, msg string) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	w.Write(append(b, '\n'))
}

// lockedWriter is out, shared by the SDK's answers and the filter's: each
// Write (one whole line) goes out alone.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
