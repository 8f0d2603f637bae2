package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/coachd/coachd"
)

// loop runs model rounds until one ends the turn and returns the stop
// reason.
func (t *Turn) loop(ctx context.Context, lim Limits) string {
	calls, failedRounds := 0, 0
	if t.x.called == nil { // begin seeds it when the turn resumes a paused one
		t.x.called = map[string]bool{}
	}
	contracts := &t.agent.Contracts
	for round := 0; ; round++ {
		if round >= lim.MaxRounds {
			return coachd.TurnMaxRounds
		}
		if ctx.Err() != nil {
			return t.stopReason(ctx)
		}
		t.refreshSystem()
		req := t.modelRequest()
		req.NoHistoryCache = round == 0 && writesUnread(t.history)
		// A round whose reply the session could not store is not asked
		// for: its tokens would be spent and charged for nothing.
		room := t.room()
		if room < 1 {
			return t.fail(sessionFull())
		}
		last := room < roundRoom
		if last && len(req.Tools) > 0 {
			req.ToolChoice = &coachd.ToolChoice{Type: "none"}
		}
		if stop := t.roundBudget(ctx, round, req); stop != "" {
			return stop
		}
		if round > 0 {
			t.emit(coachd.Event{Type: coachd.EventRoundBoundary})
		}
		resp, err := t.streamOrFallback(ctx, req)
		if t.agent.ActionTags && err != nil {
			stripTags(resp) // a broken reply's tags are not run, nor stored
		}
		t.addUsage(req, resp)
		t.noteInput(req, resp)
		t.emit(coachd.Event{Type: coachd.EventUsage, Usage: t.turnUsage()})
		if err != nil {
			t.savePartial(ctx, resp)
			if ctx.Err() != nil {
				return t.stopReason(ctx)
			}
			return t.fail(err)
		}
		if t.agent.ActionTags {
			t.runActions(ctx, lim, stripTags(resp), &calls)
		}
		uses := toolUses(resp.Blocks)
		switch {
		case last && len(uses) > 0:
			// Calls it was not offered: answered as not run (or left
			// out, without room for their results).
			return t.finish(ctx, resp, coachd.TurnSessionFull)
		case resp.StopReason == coachd.StopRefusal:
			return t.finish(ctx, resp, coachd.TurnRefusal)
		case resp.StopReason == coachd.StopMaxTokens:
			return t.finish(ctx, resp, coachd.TurnMaxTokens)
		case len(uses) == 0:
			v := t.endViolations(resp)
			if len(v) == 0 {
				if contracts.output != nil {
					t.res.Output = json.RawMessage(finalOutput(resp))
				}
				if stop := t.finish(ctx, resp, coachd.TurnEndTurn); stop != coachd.TurnEndTurn || !last {
					return stop
				}
				return coachd.TurnSessionFull
			}
			if t.x.repairs < contracts.MaxRepairs && round+1 < lim.MaxRounds && !last {
				if stop := t.repair(ctx, resp, v); stop != "" {
					return stop
				}
				continue
			}
			if stop := t.finish(ctx, resp, coachd.TurnContractViolation); stop != coachd.TurnContractViolation {
				return stop
			}
			return t.violation(v)
		}
		for _, u := range uses {
			t.emit(coachd.Event{Type: coachd.EventToolCallReady, ToolUseID: u.ID, ToolName: u.Name, Input: u.Input})
			t.res.ToolCalls = append(t.res.ToolCalls, u)
		}
		if calls += len(uses); calls > lim.MaxToolCalls {
			msg := fmt.Sprintf("not run: the turn reached its limit of %d tool calls", lim.MaxToolCalls)
			outs := make([]outcome, len(uses))
			for i, u := range uses {
				outs[i] = outcome{block: coachd.ToolResultBlock(u.ID, msg, true), failed: true}
				// Each call announced above is answered, as a round's
				// results are (runTools): a client shows a call as
				// running until its result.
				t.emit(coachd.Event{Type: coachd.EventToolResult, ToolUseID: u.ID, ToolName: u.Name, Result: msg, IsError: true})
			}
			if stop := t.saveRound(ctx, resp, uses, outs, -1); stop != "" {
				return stop
			}
			return coachd.TurnToolLimit
		}
		// Tools may read what the turn stored (its messages).
		if err := t.sync(); err != nil {
			return t.fail(err)
		}
		forbidden := t.x.forbid
		t.x.misordered = t.x.misordered[:0]
		t.round = &roundNotes{} // the notes its tools make join its write (saveRound)
		outs, interactive := t.runTools(ctx, lim, uses)
		t.markCalled(uses, outs, interactive)
		if stop := t.saveRound(ctx, resp, uses, outs, interactive); stop != "" {
			return stop
		}
		refused := t.x.forbid > forbidden || len(t.x.misordered) > 0
		if refused {
			// A refused must_not_call call, or a must_call out of order, is
			// a violation the model repairs by reading the refusal; too
			// many end the turn.
			if t.x.repairs++; t.x.repairs > contracts.MaxRepairs {
				return t.violation(t.refusedCalls(uses))
			}
		}
		if interactive >= 0 {
			return coachd.TurnAwaitingInput
		}
		if ctx.Err() != nil {
			return t.stopReason(ctx)
		}
		switch {
		case refused:
			// Contract refusals are bounded by max_repairs, not the breaker.
		case allFailed(outs):
			failedRounds++
		default:
			failedRounds = 0
		}
		if failedRounds >= lim.BreakerRounds {
			return coachd.TurnCircuitOpen
		}
	}
}

// stopReason names why a cancelled turn stopped.
func (t *Turn) stopReason(ctx context.Context) string {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return coachd.TurnDeadline
	}
	return coachd.TurnAborted
}

// streamOrFallback runs the round's model call; when the model answers
// overloaded or unavailable before any event of the call reached the
// client, the agent's fallback model (if any) serves the round instead.
func (t *Turn) streamOrFallback(ctx context.Context, req *coachd.ModelRequest) (*coachd.ModelResponse, error) {
	before := t.emitted()
	resp, err := t.stream(ctx, req)
	fb := t.agent.FallbackModel
	code := coachd.ErrorCode(err)
	if err == nil || fb == "" || fb == req.Model || ctx.Err() != nil || t.emitted() != before ||
		(code != coachd.EUPSTREAMBUSY && code != coachd.EAPI) {
		return resp, err
	}
	if !t.fallbackFits(req, resp, fb) {
		// The round fails as it would without a fallback.
		return resp, err
	}
	t.r.cfg.Logger.Warn("model unavailable: the round goes to the fallback model", "session", t.sess.ID,
		"model", req.Model, "fallback", fb, "code", code, "err", err)
	t.addUsage(req, resp)
	req.Model = fb
	return t.stream(ctx, req)
}

// emitted is how many events of the reply the turn has sent (all but
// turn_started, which the user message's write may send at any time).
func (t *Turn) emitted() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.replied
}

// stream runs one model call, forwarding deltas. It always returns a
// response (partial after an error).
func (t *Turn) stream(ctx context.Context, req *coachd.ModelRequest) (resp *coachd.ModelResponse, err error) {
	ctx, span := startChatSpan(ctx, req)
	defer func() { endChatSpan(span, resp, err) }()
	s := t.model().Stream(ctx, req)
	defer s.Close()
	// The request is on its way: an admission left behind it is done by
	// now, or nearly (turn_started first, then the reply).
	if err := t.acknowledge(); err != nil {
		return &coachd.ModelResponse{}, err
	}
	var tags *TagFilter // holds back text that may be an action tag
	var werr error      // a write behind failed: no text goes out
	// reply sends the reply's text once the writes behind it are stored.
	reply := func(ev coachd.Event) bool {
		if werr == nil {
			werr = t.sync()
		}
		if werr != nil {
			return false
		}
		t.emit(ev)
		return true
	}
	if t.agent.ActionTags {
		tags = &TagFilter{}
		defer func() {
			if rest := tags.Flush(); rest != "" {
				reply(coachd.Event{Type: coachd.EventTextDelta, Text: rest})
			}
		}()
	}
	for s.Next() {
		ev := s.Event()
		ok := true
		switch ev.Type {
		case coachd.ModelTextDelta:
			text := ev.Text
			if tags != nil {
				text = tags.Write(text)
			}
			if text != "" {
				ok = reply(coachd.Event{Type: coachd.EventTextDelta, Text: text})
			}
		case coachd.ModelThinkingDelta:
			ok = reply(coachd.Event{Type: coachd.EventThinkingDelta, Text: ev.Text})
		case coachd.ModelToolUseStart:
			// The text block before the call has ended, and tags are
			// found block by block (stripTags): what it held is text.
			if tags != nil {
				if rest := tags.Flush(); rest != "" {
					ok = reply(coachd.Event{Type: coachd.EventTextDelta, Text: rest})
				}
			}
			t.emit(coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: ev.ID, ToolName: ev.Name})
		}
		if !ok {
			break
		}
	}
	resp = s.Response()
	if resp == nil {
		resp = &coachd.ModelResponse{}
	}
	// Tool inputs are made sendable once, here: what runs, what is stored
	// and what is sent back all use the same input.
	for i, b := range resp.Blocks {
		if b.Type == coachd.BlockToolUse {
			resp.Blocks[i].Input = validInput(b.Input)
		}
	}
	err = cmp.Or(werr, s.Err())
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return resp, err
}

// modelRequest assembles the round's request from the agent and history.
func (t *Turn) modelRequest() *coachd.ModelRequest {
	a := t.agent
	maxTokens := a.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	req := &coachd.ModelRequest{
		Model:          a.Model,
		MaxTokens:      maxTokens,
		ThinkingBudget: a.Thinking,
		Temperature:    a.Temperature,
		Messages:       t.historySent(),
		Tools:          t.tools.Specs(a.Tools),
		UserID:         t.req.User.ID,
	}
	withTail(req, t.x.tail)
	if len(t.x.system) > 0 {
		req.System = t.x.system
	} else if a.Prompt != "" {
		req.System = []coachd.Block{coachd.TextBlock(a.Prompt)}
	}
	return req
}

// historySent is the history as a request sends it (History of
// compacted). The turn keeps the last one it built: a request reuses it
// while t.history is the history it came from (as long, with the same
// last message; the history only grows), as the first round's does the
// reservation's, whose estimate built the same request. Each request
// gets its own copy of the messages: withTail replaces the last one.
func (t *Turn) historySent() []coachd.ModelMessage {
	return slices.Clone(t.sentHistory().msgs)
}

// sentView is the compacted history historySent sends and its estimated
// tokens (historyTokens), without sizing its photos again.
func (t *Turn) sentView() ([]*coachd.Message, int64) {
	c := t.sentHistory()
	return slices.Clip(c.view), c.tokens
}

// sentHistory is t.x.sent, built again when t.history has moved on.
func (t *Turn) sentHistory() *sentHistory {
	n, c := len(t.history), &t.x.sent
	if n == 0 || c.msgs == nil || c.n != n || c.last != t.history[n-1] {
		a := t.agent
		view, tokens := compactedSized(t.history, a.Compaction)
		*c = sentHistory{n: n, view: view, tokens: tokens, msgs: History(view, t.tools.Truncations(a.Tools))}
		if n > 0 {
			c.last = t.history[n-1]
		}
	}
	return c
}

func toolUses(blocks []coachd.Block) []coachd.ToolCall {
	var out []coachd.ToolCall
	for _, b := range blocks {
		if b.Type == coachd.BlockToolUse {
			out = append(out, coachd.ToolCall{ID: b.ID, Name: b.Name, Input: b.Input})
		}
	}
	return out
}

// validInput returns input when it is a JSON object and {} otherwise (a
// tool input cut by max_tokens is not valid JSON, and could not be sent
// back to the API).
func validInput(in json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(in, &m) != nil || m == nil {
		return json.RawMessage("{}")
	}
	return in
}

func allFailed(outs []outcome) bool {
	for _, o := range outs {
		if !o.failed {
			return false
		}
	}
	return len(outs) > 0
}

// refusedCalls names the round's calls refused by must_not_call or by an
// ordered must_call.
func (t *Turn) refusedCalls(uses []coachd.ToolCall) []coachd.FieldError {
	var v []coachd.FieldError
	for _, u := range uses {
		if slices.Contains(t.agent.Contracts.MustNotCall, u.Name) {
			v = append(v, coachd.FieldError{Field: "must_not_call", Message: u.Name + " was called", Code: "must_not_call"})
		}
	}
	for _, name := range t.x.misordered {
		v = append(v, coachd.FieldError{Field: "must_call", Message: name + " was called out of order", Code: "must_call_order"})
	}
	return v
}
