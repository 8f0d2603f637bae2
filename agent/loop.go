package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/coachd/coachd"
)

// loop runs model rounds until one ends the turn and returns the stop
// reason.
func (t *Turn) loop(ctx context.Context, lim Limits) string {
	calls, failedRounds := 0, 0
	for round := 0; ; round++ {
		if round >= lim.MaxRounds {
			return coachd.TurnMaxRounds
		}
		if ctx.Err() != nil {
			return t.stopReason(ctx)
		}
		if round > 0 {
			t.emit(coachd.Event{Type: coachd.EventRoundBoundary})
		}
		resp, err := t.stream(ctx)
		t.usage = t.usage.Add(resp.Usage)
		t.emit(coachd.Event{Type: coachd.EventUsage, Usage: t.turnUsage()})
		if err != nil {
			t.savePartial(ctx, resp)
			if ctx.Err() != nil {
				return t.stopReason(ctx)
			}
			return t.fail(err)
		}
		uses := toolUses(resp.Blocks)
		switch {
		case resp.StopReason == coachd.StopRefusal:
			return t.finish(ctx, resp, coachd.TurnRefusal)
		case resp.StopReason == coachd.StopMaxTokens:
			return t.finish(ctx, resp, coachd.TurnMaxTokens)
		case len(uses) == 0:
			return t.finish(ctx, resp, coachd.TurnEndTurn)
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
			}
			if stop := t.saveRound(ctx, resp, uses, outs, -1); stop != "" {
				return stop
			}
			return coachd.TurnToolLimit
		}
		outs, interactive := t.runTools(ctx, lim, uses)
		if stop := t.saveRound(ctx, resp, uses, outs, interactive); stop != "" {
			return stop
		}
		if interactive >= 0 {
			return coachd.TurnAwaitingInput
		}
		if ctx.Err() != nil {
			return t.stopReason(ctx)
		}
		if allFailed(outs) {
			failedRounds++
		} else {
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

// stream runs one model call, forwarding deltas. It always returns a
// response (partial after an error).
func (t *Turn) stream(ctx context.Context) (*coachd.ModelResponse, error) {
	s := t.r.cfg.Model.Stream(ctx, t.modelRequest())
	defer s.Close()
	for s.Next() {
		ev := s.Event()
		switch ev.Type {
		case coachd.ModelTextDelta:
			t.emit(coachd.Event{Type: coachd.EventTextDelta, Text: ev.Text})
		case coachd.ModelThinkingDelta:
			t.emit(coachd.Event{Type: coachd.EventThinkingDelta, Text: ev.Text})
		case coachd.ModelToolUseStart:
			t.emit(coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: ev.ID, ToolName: ev.Name})
		}
	}
	resp := s.Response()
	if resp == nil {
		resp = &coachd.ModelResponse{}
	}
	err := s.Err()
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
		Messages:       History(t.history, t.truncations()),
		Tools:          t.r.cfg.Tools.Specs(a.Tools),
		UserID:         t.req.User.ID,
	}
	if a.Prompt != "" {
		req.System = []coachd.Block{coachd.TextBlock(a.Prompt)}
	}
	return req
}

func (t *Turn) truncations() map[string][]string {
	m := map[string][]string{}
	for _, name := range t.agent.Tools {
		if tool, ok := t.r.cfg.Tools.Get(name); ok {
			if f := tool.Definition().Truncate; len(f) > 0 {
				m[name] = f
			}
		}
	}
	return m
}

func toolUses(blocks []coachd.Block) []coachd.ToolCall {
	var out []coachd.ToolCall
	for _, b := range blocks {
		if b.Type == coachd.BlockToolUse {
			out = append(out, coachd.ToolCall{ID: b.ID, Name: b.Name, Input: validInput(b.Input)})
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
