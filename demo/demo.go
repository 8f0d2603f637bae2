// Package demo is the offline demo model: a coachd.Model that answers with
// a few deterministic rules instead of an LLM, so that coachd runs end to
// end (streaming, tools, interactions, session lifecycle) with no API key.
// Its first reply in every session says so.
package demo

import (
	"context"
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// DefaultDelay is a per-chunk pace that reads as typing; cmd/ passes it
// when it serves the demo model to people.
const DefaultDelay = 30 * time.Millisecond

// Name is the model name the demo reports.
const Name = "coachd-demo"

// Config configures the demo model.
type Config struct {
	// Delay is the pause before each streamed chunk. Zero streams at once
	// (tests); DefaultDelay looks like a model typing.
	Delay time.Duration
}

// Model is the demo model. It is safe for concurrent use.
type Model struct {
	delay time.Duration
}

var _ coachd.Model = (*Model)(nil)

// New returns a demo model.
func New(cfg Config) *Model {
	return &Model{delay: max(cfg.Delay, 0)}
}

// Stream plans the whole reply from the request up front, then plays it
// back as model events, one chunk per Next.
func (m *Model) Stream(ctx context.Context, req *coachd.ModelRequest) coachd.ModelStream {
	r := plan(req)
	s := &stream{
		ctx:   ctx,
		delay: m.delay,
		resp: coachd.ModelResponse{
			ID:    "msg_demo_" + r.key,
			Model: Name,
			Usage: coachd.Usage{InputTokens: r.inputTokens},
		},
		stopReason: r.stopReason,
	}
	s.events = script(r)
	return s
}

// script turns a reply into the events a streaming model would send: text
// in chunks of a few words, tool inputs in JSON fragments, a block_stop
// after each block and a final message_delta with the stop reason and the
// usage.
func script(r reply) []coachd.ModelEvent {
	var evs []coachd.ModelEvent
	var out int // output characters so far
	for i, b := range r.blocks {
		switch b.Type {
		case coachd.BlockText:
			for _, c := range chunkWords(b.Text, 3) {
				evs = append(evs, coachd.ModelEvent{Type: coachd.ModelTextDelta, Index: i, Text: c})
			}
			out += utf8.RuneCountInString(b.Text)
		case coachd.BlockToolUse:
			evs = append(evs, coachd.ModelEvent{Type: coachd.ModelToolUseStart, Index: i, ID: b.ID, Name: b.Name})
			for _, c := range chunkRunes(string(b.Input), 24) {
				evs = append(evs, coachd.ModelEvent{Type: coachd.ModelInputJSONDelta, Index: i, Text: c})
			}
			out += utf8.RuneCountInString(b.Name) + utf8.RuneCountInString(string(b.Input))
		}
		evs = append(evs, coachd.ModelEvent{Type: coachd.ModelBlockStop, Index: i})
	}
	return append(evs, coachd.ModelEvent{
		Type:       coachd.ModelMessageDelta,
		StopReason: r.stopReason,
		Usage:      coachd.Usage{InputTokens: r.inputTokens, OutputTokens: tokens(out)},
	})
}

// stream plays a scripted reply back. It is used by one goroutine, like
// the SDK's streams.
type stream struct {
	ctx        context.Context
	delay      time.Duration
	events     []coachd.ModelEvent
	stopReason string

	next    int
	cur     coachd.ModelEvent
	err     error
	closed  bool
	resp    coachd.ModelResponse
	indexes []int         // the event Index of each block in resp.Blocks
	pending *coachd.Block // the tool_use block being streamed
	partial []byte        // its input JSON so far
	outRun  int           // output characters seen, for partial usage
}

func (s *stream) Next() bool {
	if s.err != nil || s.closed || s.next >= len(s.events) {
		return false
	}
	if err := s.ctx.Err(); err != nil {
		s.err = err
		return false
	}
	ev := s.events[s.next]
	if s.delay > 0 && (ev.Type == coachd.ModelTextDelta || ev.Type == coachd.ModelInputJSONDelta) {
		t := time.NewTimer(s.delay)
		select {
		case <-s.ctx.Done():
			t.Stop()
			s.err = s.ctx.Err()
			return false
		case <-t.C:
		}
	}
	s.next++
	s.cur = ev
	s.apply(ev)
	return true
}

// apply folds ev into the response, as Message.Accumulate does. A tool_use
// block joins the response only when its input is complete, so a partial
// response never holds invalid JSON.
func (s *stream) apply(ev coachd.ModelEvent) {
	blocks := s.resp.Blocks
	switch ev.Type {
	case coachd.ModelTextDelta:
		if n := len(blocks); n > 0 && blocks[n-1].Type == coachd.BlockText && s.lastIndex() == ev.Index {
			blocks[n-1].Text += ev.Text
		} else {
			s.resp.Blocks = append(blocks, coachd.TextBlock(ev.Text))
			s.indexes = append(s.indexes, ev.Index)
		}
		s.outRun += utf8.RuneCountInString(ev.Text)
	case coachd.ModelToolUseStart:
		s.pending = &coachd.Block{Type: coachd.BlockToolUse, ID: ev.ID, Name: ev.Name}
		s.partial = s.partial[:0]
		s.outRun += utf8.RuneCountInString(ev.Name)
	case coachd.ModelInputJSONDelta:
		s.partial = append(s.partial, ev.Text...)
		s.outRun += utf8.RuneCountInString(ev.Text)
	case coachd.ModelBlockStop:
		if s.pending != nil {
			s.pending.Input = json.RawMessage(string(s.partial))
			s.resp.Blocks = append(blocks, *s.pending)
			s.indexes = append(s.indexes, ev.Index)
			s.pending = nil
		}
	case coachd.ModelMessageDelta:
		s.resp.StopReason = ev.StopReason
		s.resp.Usage = ev.Usage
		return
	}
	s.resp.Usage.OutputTokens = tokens(s.outRun)
}

func (s *stream) lastIndex() int {
	if len(s.indexes) == 0 {
		return -1
	}
	return s.indexes[len(s.indexes)-1]
}

func (s *stream) Event() coachd.ModelEvent { return s.cur }

func (s *stream) Err() error { return s.err }

// Response returns the reply assembled so far: complete once Next returned
// false without error, the text streamed so far (and completed tool calls)
// after a cancellation.
func (s *stream) Response() *coachd.ModelResponse {
	r := s.resp
	r.Blocks = make([]coachd.Block, len(s.resp.Blocks))
	copy(r.Blocks, s.resp.Blocks)
	return &r
}

func (s *stream) Close() error {
	s.closed = true
	return nil
}

// tokens estimates a token count from a character count: about four
// characters a token, at least one.
func tokens(chars int) int64 {
	return int64(max(1, (chars+3)/4))
}

// chunkWords splits s into pieces of n words each (the next piece starts
// with the space after them), keeping every byte, so the pieces join back
// to s.
func chunkWords(s string, n int) []string {
	var out []string
	start, words, inWord := 0, 0, false
	for i, r := range s {
		space := r == ' ' || r == '\n' || r == '\t'
		if space && inWord {
			words++
			if words == n {
				words = 0
				out = append(out, s[start:i])
				start = i
			}
		}
		inWord = !space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// chunkRunes splits s into pieces of at most n runes.
func chunkRunes(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		i, k := 0, 0
		for i < len(s) && k < n {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			k++
		}
		out = append(out, s[:i])
		s = s[i:]
	}
	return out
}
