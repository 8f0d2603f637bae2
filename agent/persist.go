package agent

import (
	"context"
	"encoding/json"

	"github.com/coachd/coachd"
)

// toolCallMeta is metadata.tool_calls of an assistant message.
type toolCallMeta struct {
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
	Source string          `json:"source,omitempty"` // action_tag for calls written as tags
}

type assistantMeta struct {
	ToolCalls  []toolCallMeta `json:"tool_calls,omitempty"`
	Actions    []actionRecord `json:"actions,omitempty"`
	StopReason string         `json:"stop_reason,omitempty"`
	Model      string         `json:"model,omitempty"`
}

// assistantMessage builds the stored assistant message of a response.
func (t *Turn) assistantMessage(resp *coachd.ModelResponse, partial bool) *coachd.Message {
	blocks := make([]coachd.Block, 0, len(resp.Blocks))
	meta := assistantMeta{StopReason: resp.StopReason, Model: resp.Model}
	for _, b := range resp.Blocks {
		if b.Type == coachd.BlockToolUse {
			meta.ToolCalls = append(meta.ToolCalls, toolCallMeta{Name: b.Name, Input: b.Input})
		}
		blocks = append(blocks, b)
	}
	// Action tags run in this reply are recorded on it.
	for _, a := range t.x.actions {
		meta.ToolCalls = append(meta.ToolCalls, toolCallMeta{Name: a.Name, Input: a.Input, Source: "action_tag"})
	}
	meta.Actions, t.x.actions = t.x.actions, nil
	raw, _ := json.Marshal(meta)
	u := resp.Usage
	m := &coachd.Message{
		Role: coachd.RoleAssistant, Blocks: blocks, Content: coachd.BlocksText(blocks),
		Metadata: raw, Usage: &u, Partial: partial,
	}
	// The first assistant message of the turn carries the id announced in
	// turn_started.
	if !t.savedReply {
		m.ID = t.res.MessageID
		t.savedReply = true
	}
	t.res.Text += m.Content
	return m
}

// append stores messages atomically and adds them to the turn's history.
func (t *Turn) append(ctx context.Context, msgs ...*coachd.Message) error {
	wctx, done := persistCtx(ctx)
	defer done()
	if err := t.r.cfg.Store.AppendMessages(wctx, t.req.User.ID, t.sess.ID, msgs); err != nil {
		return err
	}
	t.history = append(t.history, msgs...)
	return nil
}

// finish stores a final response. Tool calls it holds (cut by max_tokens or
// a refusal) are answered as interrupted so history stays valid.
func (t *Turn) finish(ctx context.Context, resp *coachd.ModelResponse, stop string) string {
	msgs := []*coachd.Message{t.assistantMessage(resp, false)}
	if ids := toolUses(resp.Blocks); len(ids) > 0 {
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: interruptedCalls(ids)})
	}
	if err := t.append(ctx, msgs...); err != nil {
		return t.fail(err)
	}
	return stop
}

// savePartial stores what the model said before the stream broke: its text,
// marked partial. Unfinished tool calls and unsigned thinking are dropped.
func (t *Turn) savePartial(ctx context.Context, resp *coachd.ModelResponse) {
	var blocks []coachd.Block
	for _, b := range resp.Blocks {
		if b.Type == coachd.BlockText && b.Text != "" {
			blocks = append(blocks, b)
		}
	}
	if len(blocks) == 0 {
		return
	}
	part := *resp
	part.Blocks = blocks
	if err := t.append(ctx, t.assistantMessage(&part, true)); err != nil {
		t.r.cfg.Logger.Error("storing partial reply", "session", t.sess.ID, "err", err)
	}
}

// saveRound stores a tool round atomically: the assistant message and the
// user message with the results. With an interactive call (index >= 0) the
// results are held on the session until the user answers.
func (t *Turn) saveRound(ctx context.Context, resp *coachd.ModelResponse, calls []coachd.ToolCall, outs []outcome, interactive int) string {
	results := make([]coachd.Block, len(outs))
	for i, o := range outs {
		results[i] = o.block
	}
	asst := t.assistantMessage(resp, false)
	if interactive < 0 {
		if err := t.append(ctx, asst, &coachd.Message{Role: coachd.RoleUser, Blocks: results}); err != nil {
			return t.fail(err)
		}
		return ""
	}
	pending, ev := t.pause(calls[interactive], results)
	if err := t.append(ctx, asst); err != nil {
		return t.fail(err)
	}
	wctx, done := persistCtx(ctx)
	defer done()
	sess, err := t.r.cfg.Store.UpdateSession(wctx, t.req.User.ID, t.sess.ID, coachd.SessionUpdate{SetPending: true, Pending: pending})
	if err != nil {
		return t.fail(err)
	}
	t.sess = sess
	t.emit(ev)
	return ""
}

func interruptedCalls(calls []coachd.ToolCall) []coachd.Block {
	out := make([]coachd.Block, len(calls))
	for i, c := range calls {
		out[i] = coachd.ToolResultBlock(c.ID, InterruptedText, true)
	}
	return out
}
