package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Reply is what the fake answers to one request: an HTTP error (Status),
// or a streamed message of Text and tool Calls, then a finish_reason, a
// usage chunk and [DONE], with an optional Fault.
type Reply struct {
	Status int
	Header http.Header
	Body   string // default: the API's error body for Status

	Text  string
	Chunk int // runes per content delta; 0: 4
	Calls []Call
	// Interleave sends the calls' argument fragments alternately, as a
	// server streaming parallel calls at once may.
	Interleave bool
	Finish     string // default tool_calls with Calls, stop otherwise
	Usage      *Usage // default: counted from the request and reply sizes
	NoUsage    bool   // a server that ignores stream_options.include_usage
	NoDone     bool   // no data: [DONE] at the end
	Fault      Fault
	EventDelay time.Duration // waited before each chunk
}

// Call is a tool call; its arguments stream in fragments of Split bytes
// (0: 5), the first fragment in the chunk after the one naming the call.
type Call struct {
	ID, Name, Args string
	Split          int
}

// Usage is the usage chunk's counts.
type Usage struct {
	Prompt, Completion, Cached int64
}

// FaultKind says how a stream goes wrong.
type FaultKind int

// Faults.
const (
	NoFault    FaultKind = iota
	FaultError           // an error object in a data line after After chunks
	FaultDrop            // the body ends after After chunks
	FaultStall           // nothing after After chunks until the client goes away
)

// Fault is a failure injected into a stream.
type Fault struct {
	Kind  FaultKind
	After int
	Type  string // FaultError: error.type, default server_error
	Code  any    // FaultError: error.code (a string, a number or nil)
}

// Text is a text reply.
func Text(text string) Reply { return Reply{Text: text} }

// Calls is a reply of tool calls.
func Calls(calls ...Call) Reply { return Reply{Calls: calls} }

// Status is an HTTP error reply.
func Status(code int, header http.Header, body string) Reply {
	return Reply{Status: code, Header: header, Body: body}
}

// ErrorAfter ends the stream with an in-stream error after n chunks.
func (r Reply) ErrorAfter(n int, typ string, code any) Reply {
	r.Fault = Fault{Kind: FaultError, After: n, Type: typ, Code: code}
	return r
}

// StallAfter sends n chunks, then nothing until the client goes away.
func (r Reply) StallAfter(n int) Reply { r.Fault = Fault{Kind: FaultStall, After: n}; return r }

// DropAfter ends the body after n chunks, with no finish_reason.
func (r Reply) DropAfter(n int) Reply { r.Fault = Fault{Kind: FaultDrop, After: n}; return r }

// WithFinish sets the finish_reason.
func (r Reply) WithFinish(f string) Reply { r.Finish = f; return r }

func (s *Server) stream(w http.ResponseWriter, r *http.Request, rep Reply, req *Request, n int) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	id := fmt.Sprintf("chatcmpl-fake%d", n)
	chunks := rep.chunks(id, req)
	for i, c := range chunks {
		if rep.Fault.Kind != NoFault && i == rep.Fault.After {
			switch rep.Fault.Kind {
			case FaultError:
				typ := rep.Fault.Type
				if typ == "" {
					typ = "server_error"
				}
				b, _ := json.Marshal(map[string]any{"error": map[string]any{
					"message": "The server had an error while processing your request.", "type": typ, "code": rep.Fault.Code}})
				fmt.Fprintf(w, "data: %s\n\n", b)
			case FaultStall:
				if fl != nil {
					fl.Flush()
				}
				select {
				case <-r.Context().Done():
				case <-s.closed:
				}
			}
			return
		}
		if rep.EventDelay > 0 {
			select {
			case <-time.After(rep.EventDelay):
			case <-r.Context().Done():
				return
			}
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	if !rep.NoDone {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// chunks builds the reply's chat.completion.chunk objects.
func (rep Reply) chunks(id string, req *Request) []map[string]any {
	mk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1767225600, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	out := []map[string]any{mk(map[string]any{"role": "assistant", "content": ""}, nil)}
	size := rep.Chunk
	if size <= 0 {
		size = 4
	}
	rs := []rune(rep.Text)
	for i := 0; i < len(rs); i += size {
		out = append(out, mk(map[string]any{"content": string(rs[i:min(i+size, len(rs))])}, nil))
	}
	var frags [][]map[string]any // per call
	for i, c := range rep.Calls {
		call := func(fn map[string]any, extra map[string]any) map[string]any {
			tc := map[string]any{"index": i, "function": fn}
			for k, v := range extra {
				tc[k] = v
			}
			return mk(map[string]any{"tool_calls": []any{tc}}, nil)
		}
		list := []map[string]any{call(map[string]any{"name": c.Name, "arguments": ""},
			map[string]any{"id": c.ID, "type": "function"})}
		split := c.Split
		if split <= 0 {
			split = 5
		}
		for j := 0; j < len(c.Args); j += split {
			list = append(list, call(map[string]any{"arguments": c.Args[j:min(j+split, len(c.Args))]}, nil))
		}
		frags = append(frags, list)
	}
	if rep.Interleave {
		for k := 0; ; k++ {
			more := false
			for _, list := range frags {
				if k < len(list) {
					out, more = append(out, list[k]), true
				}
			}
			if !more {
				break
			}
		}
	} else {
		for _, list := range frags {
			out = append(out, list...)
		}
	}
	finish := rep.Finish
	if finish == "" {
		finish = "stop"
		if len(rep.Calls) > 0 {
			finish = "tool_calls"
		}
	}
	out = append(out, mk(map[string]any{}, finish))
	if !rep.NoUsage {
		u := rep.Usage
		if u == nil {
			outBytes := len(rep.Text)
			for _, c := range rep.Calls {
				outBytes += len(c.Args)
			}
			u = &Usage{Prompt: int64(len(req.Raw)+3) / 4, Completion: int64(outBytes+3) / 4}
		}
		out = append(out, map[string]any{"id": id, "object": "chat.completion.chunk", "model": req.Model,
			"choices": []any{}, "usage": map[string]any{
				"prompt_tokens": u.Prompt, "completion_tokens": u.Completion, "total_tokens": u.Prompt + u.Completion,
				"prompt_tokens_details": map[string]any{"cached_tokens": u.Cached}}})
	}
	return out
}
