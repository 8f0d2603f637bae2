package anthropic

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/coachd/coachd"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
)

// stream adapts a Messages API event stream to coachd.ModelStream. The message
// is assembled by the SDK's own Message.Accumulate; stream only guards
// against protocol violations Accumulate does not check (a second
// message_start) and translates events.
type stream struct {
	ctx context.Context
	// sdk is the SDK's stream: its streaming method sent the call, or
	// its decoder reads the events; nil when Post sent it and coachd
	// decodes (Model.Stream), or nothing was sent.
	sdk *ssestream.Stream[sdk.MessageStreamEventUnion]
	// sse, when set, reads the events from the body the SDK handed over
	// (sse.go); sdk, if any, then only closes the body.
	sse *sseReader
	cur sdk.MessageStreamEventUnion // the event being accepted

	msg     sdk.Message
	started bool   // message_start seen
	final   bool   // message_delta seen: the usage is the upstream's own count
	stopped bool   // message_stop seen
	output  int    // bytes of text, thinking and tool input streamed
	badTool string // a tool_use whose input was not a JSON object at its stop
	stale   []bool // per block: changed since its wire JSON was written (accumulate)
	// Text or thinking deltas of block pendIndex not yet in s.msg (grow).
	pend      []byte
	pendKind  byte // 't' text, 'k' thinking, 0 none
	pendIndex int
	ev        coachd.ModelEvent
	err       error
	done      bool
	closed    bool
	model     *Model // its credentials are kept out of error text (Model.secrets)
}

// keys are the credentials to keep out of an error's text.
func (s *stream) keys() []string {
	if s.model == nil {
		return nil
	}
	return s.model.secrets()
}

func (s *stream) Next() bool {
	if s.done {
		return false
	}
	for {
		ev, err := s.read()
		if err != nil {
			s.fail(mapError(s.ctx, err, s.keys()))
			return false
		}
		if ev == nil {
			break
		}
		ok, err := s.accept(ev)
		if err != nil {
			s.fail(err)
			return false
		}
		if ok {
			return true
		}
	}
	if !s.stopped && s.ctx.Err() != nil {
		s.fail(mapError(s.ctx, s.ctx.Err(), s.keys()))
		return false
	}
	if !s.stopped {
		// The body ended cleanly but the message did not: a dropped
		// connection or a proxy cutting the stream short.
		s.fail(&coachd.Error{Code: coachd.EAPI, Message: "model stream ended before message_stop"})
		return false
	}
	s.done = true
	s.Close()
	return false
}

// read returns the next event, nil at the end of the body, or the error
// that ended the stream.
func (s *stream) read() (*sdk.MessageStreamEventUnion, error) {
	if s.sse != nil {
		return s.sse.next(&s.cur)
	}
	if s.sdk.Next() {
		s.cur = s.sdk.Current()
		return &s.cur, nil
	}
	return nil, s.sdk.Err()
}

// accept folds one SDK event into the message and sets s.ev; it reports
// whether the event is one coachd surfaces.
func (s *stream) accept(ev *sdk.MessageStreamEventUnion) (bool, error) {
	if ev.Type == "message_start" {
		if s.started {
			if ev.Message.ID == s.msg.ID {
				return false, nil // a duplicate: harmless, ignored
			}
			return false, &coachd.Error{Code: coachd.EAPI,
				Message: "model stream started a second message",
				Err:     fmt.Errorf("message_start %q while %q is open", ev.Message.ID, s.msg.ID)}
		}
		s.started = true
	}
	// Accumulate empties a tool input that is not JSON: look first.
	if err := s.checkInput(ev); err != nil {
		return false, err
	}
	if !s.grow(ev) {
		s.flush()
		if err := s.accumulate(ev); err != nil {
			return false, &coachd.Error{Code: coachd.EAPI, Message: "malformed model stream", Err: err}
		}
	}
	s.ev = coachd.ModelEvent{Index: int(ev.Index)}
	switch ev.Type {
	case "content_block_start":
		if ev.ContentBlock.Type != coachd.BlockToolUse {
			return false, nil
		}
		s.ev.Type, s.ev.ID, s.ev.Name = coachd.ModelToolUseStart, ev.ContentBlock.ID, ev.ContentBlock.Name
	case "content_block_delta":
		switch ev.Delta.Type {
		case "text_delta":
			s.ev.Type, s.ev.Text = coachd.ModelTextDelta, validText(ev.Delta.Text)
			s.output += len(ev.Delta.Text)
		case "thinking_delta":
			s.ev.Type, s.ev.Text = coachd.ModelThinkingDelta, validText(ev.Delta.Thinking)
			s.output += len(ev.Delta.Thinking)
		case "signature_delta":
			s.ev.Type, s.ev.Text = coachd.ModelSignatureDelta, ev.Delta.Signature
		case "input_json_delta":
			s.ev.Type, s.ev.Text = coachd.ModelInputJSONDelta, ev.Delta.PartialJSON
			s.output += len(ev.Delta.PartialJSON)
		default:
			return false, nil // citations_delta and future kinds: in the message only
		}
	case "content_block_stop":
		s.ev.Type = coachd.ModelBlockStop
	case "message_delta":
		s.final = true
		s.ev = coachd.ModelEvent{Type: coachd.ModelMessageDelta,
			StopReason: string(s.msg.StopReason), Usage: usage(s.msg.Usage)}
	case "message_stop":
		s.stopped = true
		return false, nil
	default:
		return false, nil
	}
	return true, nil
}

// accumulate folds ev into the message with Message.Accumulate, but for
// two events when coachd's reader decodes the stream (the SDK's path stays
// the SDK's own, the oracle of TestDecodeSame and FuzzStreamDecode):
//
//   - a content_block_start the reader decoded by hand (sseReader.block):
//     its block is decoded into the message here, once, as Accumulate
//     would from the union's copy of it;
//   - message_stop, where Accumulate writes each block's wire JSON again
//     (the text, input and signature grown) and then the message's own:
//     only the blocks changed since their content_block_stop did that
//     (s.stale) are written again, as their stop would, and the message's
//     wire JSON, which coachd never reads, is left.
func (s *stream) accumulate(ev *sdk.MessageStreamEventUnion) error {
	if s.sse == nil {
		return s.msg.Accumulate(*ev)
	}
	i := ev.Index
	switch ev.Type {
	case "content_block_start":
		if s.sse.block == nil {
			break
		}
		if i != int64(len(s.msg.Content)) {
			return fmt.Errorf("received event of type %s for content block at index %d, expected index %d", ev.Type, i, len(s.msg.Content))
		}
		s.msg.Content = append(s.msg.Content, sdk.ContentBlockUnion{})
		s.stale = append(s.stale, true)
		return s.msg.Content[i].UnmarshalJSON(s.sse.block)
	case "message_stop":
		for j, stale := range s.stale {
			if stale {
				if err := s.msg.Accumulate(sdk.MessageStreamEventUnion{Type: "content_block_stop", Index: int64(j)}); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// A stop writes the block's wire JSON again, and once more changes
	// nothing, unless the input was not JSON: the stop empties it to {},
	// which only the next write puts in the wire JSON.
	badInput := ev.Type == "content_block_stop" && i >= 0 && i < int64(len(s.msg.Content)) &&
		len(s.msg.Content[i].Input) > 0 && !coachd.ValidJSON(s.msg.Content[i].Input)
	if err := s.msg.Accumulate(*ev); err != nil {
		return err
	}
	s.noteChange(ev)
	if ev.Type == "content_block_stop" {
		s.stale[i] = badInput
	}
	return nil
}

// noteChange keeps s.stale, a flag per block of the message: whether it
// changed since its wire JSON was last written (its start, a delta; a
// content_block_stop writes it, accumulate).
func (s *stream) noteChange(ev *sdk.MessageStreamEventUnion) {
	if ev.Type == "message_start" {
		s.stale = s.stale[:0] // Accumulate replaced the message and its blocks
	}
	for len(s.stale) < len(s.msg.Content) { // a start the SDK decoded
		s.stale = append(s.stale, true)
	}
	if i := ev.Index; ev.Type == "content_block_delta" && i >= 0 && i < int64(len(s.stale)) {
		s.stale[i] = true
	}
}

// grow takes a text or thinking delta of an open block into s.pend
// instead of Accumulate, whose `Text += delta` allocates (and copies the
// whole text so far) on every delta; flush hands the text to the block
// before Accumulate or Response read it. It reports whether it took ev.
func (s *stream) grow(ev *sdk.MessageStreamEventUnion) bool {
	if ev.Type != "content_block_delta" || ev.Index < 0 || ev.Index >= int64(len(s.msg.Content)) {
		return false
	}
	var kind byte
	var text string
	switch ev.Delta.Type {
	case "text_delta":
		kind, text = 't', ev.Delta.Text
	case "thinking_delta":
		kind, text = 'k', ev.Delta.Thinking
	default:
		return false
	}
	if s.pendKind != kind || s.pendIndex != int(ev.Index) {
		s.flush()
		s.pendKind, s.pendIndex = kind, int(ev.Index)
	}
	s.noteChange(ev)
	s.pend = append(s.pend, text...)
	return true
}

// flush adds the deltas grow took to their block.
func (s *stream) flush() {
	if s.pendKind == 0 {
		return
	}
	cb := &s.msg.Content[s.pendIndex]
	if s.pendKind == 't' {
		cb.Text += string(s.pend)
	} else {
		cb.Thinking += string(s.pend)
	}
	s.pend, s.pendKind = s.pend[:0], 0
}

func (s *stream) fail(err error) {
	s.err, s.done = err, true
	s.Close()
}

func (s *stream) Event() coachd.ModelEvent { return s.ev }

func (s *stream) Err() error { return s.err }

func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.sse != nil {
		s.sse.release()
		if s.sdk == nil {
			return s.sse.res.Body.Close()
		}
	}
	if s.sdk == nil {
		return nil // the body was never sent
	}
	return s.sdk.Close()
}

// Response returns the message assembled so far. A stream cut before
// message_delta carried the upstream's output count is charged for what it
// streamed (issue 20 finding 5): output generated and seen by the user is
// paid for, whoever cut the stream.
func (s *stream) Response() *coachd.ModelResponse {
	s.flush()
	resp := &coachd.ModelResponse{
		ID:         s.msg.ID,
		Model:      string(s.msg.Model),
		StopReason: string(s.msg.StopReason),
		Usage:      usage(s.msg.Usage),
		Blocks:     make([]coachd.Block, 0, len(s.msg.Content)),
	}
	if !s.final || saneTokens(s.msg.Usage.OutputTokens) != s.msg.Usage.OutputTokens {
		resp.Usage.OutputTokens = max(resp.Usage.OutputTokens, coachd.TokensOfBytes(s.output))
	}
	for i := range s.msg.Content {
		if b, ok := block(&s.msg.Content[i]); ok {
			resp.Blocks = append(resp.Blocks, b)
		}
	}
	return resp
}

// block converts an accumulated SDK block through its wire JSON, so fields
// coachd does not type (citations, caller, ...) survive in Extra. The typed
// fields the deltas grew are laid over it: Accumulate refreshes the wire
// JSON only at content_block_stop, and a stream cut short never gets there.
func block(cb *sdk.ContentBlockUnion) (coachd.Block, bool) {
	var b coachd.Block
	raw := []byte(cb.RawJSON())
	if typ, ok := plainBlock(raw); ok {
		b.Type = typ // what decodeBlock would keep of it: the rest is laid over
	} else if plainToolUse(raw, cb) {
		b.Type, b.ID, b.Name = coachd.BlockToolUse, cb.ID, cb.Name
	} else if !decodeBlock(raw, cb, &b) {
		return b, false
	}
	layOver(&b, cb)
	return b, true
}

// decodeBlock decodes a block's wire JSON into b; JSON it cannot decode
// leaves the block its type alone (false without one).
func decodeBlock(raw []byte, cb *sdk.ContentBlockUnion, b *coachd.Block) bool {
	if err := json.Unmarshal(raw, b); err != nil {
		if cb.Type == "" {
			return false
		}
		*b = coachd.Block{Type: cb.Type}
	}
	return true
}

// layOver sets the fields of b that the deltas grew from cb's typed ones.
func layOver(b *coachd.Block, cb *sdk.ContentBlockUnion) {
	switch b.Type {
	case coachd.BlockText:
		b.Text = validText(cb.Text)
		if len(cb.Citations) > 0 {
			raws := make([]json.RawMessage, len(cb.Citations))
			for i, c := range cb.Citations {
				raws[i] = json.RawMessage(c.RawJSON())
			}
			if raw, err := json.Marshal(raws); err == nil {
				b.Extra = cloneExtra(b.Extra)
				b.Extra["citations"] = raw
			}
		}
	case coachd.BlockThinking:
		b.Thinking, b.Signature = validText(cb.Thinking), cb.Signature
	case coachd.BlockToolUse:
		// Input cut off mid-JSON (max_tokens, fixture 03) is not valid
		// JSON; like Accumulate, keep the empty object the block began with.
		b.Input = json.RawMessage(`{}`)
		if len(cb.Input) > 0 && coachd.ValidJSON(cb.Input) {
			b.Input = append(json.RawMessage(nil), cb.Input...)
		}
	}
}

func cloneExtra(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

func usage(u sdk.Usage) coachd.Usage {
	return coachd.Usage{
		InputTokens:              saneTokens(u.InputTokens),
		OutputTokens:             saneTokens(u.OutputTokens),
		CacheReadInputTokens:     saneTokens(u.CacheReadInputTokens),
		CacheCreationInputTokens: saneTokens(u.CacheCreationInputTokens),
	}
}
