package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/coachd/coachd"
)

// actionRecord is one action tag run, kept in the assistant message's
// metadata.actions (and in metadata.tool_calls with source action_tag).
type actionRecord struct {
	ID      string          `json:"id"`
	Name    string          `json:"name"`
	Input   json.RawMessage `json:"input"`
	Result  string          `json:"result"`
	IsError bool            `json:"is_error,omitempty"`
}

// stripTags removes action tags from the response's text blocks (what is
// stored and re-sent) and returns them in order.
func stripTags(resp *coachd.ModelResponse) []ActionTag {
	var tags []ActionTag
	for i, b := range resp.Blocks {
		if b.Type != coachd.BlockText {
			continue
		}
		text, found := StripActionTags(b.Text)
		resp.Blocks[i].Text = text
		tags = append(tags, found...)
	}
	return tags
}

// runActions runs the tags of a reply one by one, like tool calls: the
// payload is validated against the tool's schema, the tool must be one of
// the agent's and not interactive, each counts in the turn's calls (which
// it adds to) against max_tool_calls, and every run is streamed as
// tool_call_started, tool_call_ready and tool_result events.
func (t *Turn) runActions(ctx context.Context, lim Limits, tags []ActionTag, calls *int) {
	for _, tag := range tags {
		*calls++
		id := coachd.NewID("act", t.r.cfg.Clock.Now())
		name := tag.Tool()
		input := validInput(tag.Payload)
		t.emit(coachd.Event{Type: coachd.EventToolCallStarted, ToolUseID: id, ToolName: name})
		t.emit(coachd.Event{Type: coachd.EventToolCallReady, ToolUseID: id, ToolName: name, Input: input})
		call := coachd.ToolCall{ID: id, Name: name, Input: input}
		t.res.ToolCalls = append(t.res.ToolCalls, call)
		var out outcome
		tool, ok := t.tool(name)
		switch {
		case *calls > lim.MaxToolCalls:
			out = errOutcome(id, fmt.Sprintf("not run: the turn reached its limit of %d tool calls", lim.MaxToolCalls))
		case !ok:
			out = errOutcome(id, fmt.Sprintf("unknown action %s: this agent has no tool %q", tag.Name, name))
		case t.forbidden(name):
			out = errOutcome(id, fmt.Sprintf("refused: this agent's contract forbids %s", name))
		case t.tools.Category(name) == coachd.ToolInteractive:
			out = errOutcome(id, fmt.Sprintf("%s cannot be used as an action tag", name))
		case t.agent.Contracts.outOfOrder(name, t.x.called) != "":
			out = t.refuseOutOfOrder(id, name, t.agent.Contracts.outOfOrder(name, t.x.called))
		default:
			if err := t.tools.ValidateInput(name, input); err != nil {
				out = errOutcome(id, InvalidInputText(name, err))
			} else if reason, ok := t.needsApproval(tool, call); ok {
				out = errOutcome(id, fmt.Sprintf("not run: %s, which an action tag cannot ask for; call %s as a tool", reason, name))
			} else {
				out = t.runTool(ctx, lim.ToolTimeout, tool, call)
			}
		}
		if !out.failed {
			t.x.called[name] = true
		}
		text := out.block.ResultText()
		t.emit(coachd.Event{Type: coachd.EventToolResult, ToolUseID: id, ToolName: name, Result: text, IsError: out.block.IsError})
		t.x.actions = append(t.x.actions, actionRecord{ID: id, Name: name, Input: input, Result: text, IsError: out.block.IsError})
	}
}

// prepareSystem assembles the turn's system prompt once: agent prompt,
// skill summaries, matching skills and the context sections.
func (t *Turn) prepareSystem(ctx context.Context) {
	if t.req.Context != "" {
		defer func() { t.x.tail = append(t.x.tail, coachd.TextBlock(t.req.Context)) }()
	}
	a := t.agent
	needFacts := a.Context != nil
	for _, s := range a.Skills {
		needFacts = needFacts || len(s.When) > 0
	}
	var d *contextData
	if needFacts {
		var err error
		d, err = gather(ctx, t.r.cfg.Store, t.req.User, t.sess, t.r.cfg.Clock.Now(), a.Context)
		if err != nil {
			// The coach can still talk without its context.
			t.r.cfg.Logger.Error("context pipeline", "session", t.sess.ID, "err", err)
		}
	}
	if d != nil {
		t.x.zone = d.now.Location()
		t.x.data, t.x.mode = d, d.sess.Mode
	}
	if a.Prompt == "" && len(a.Skills) == 0 && d == nil {
		return
	}
	t.x.system, t.x.tail = systemPrompt(a, d)
}

// refreshSystem builds the prompt again when a round's tool entered or
// left an arc: the mode's skills and the session context's mode are the
// next round's. Other facts (files written this turn) wait for the next
// turn, so the cached prompt holds.
func (t *Turn) refreshSystem() {
	d := t.x.data
	if d == nil || d.sess.Mode == t.x.mode {
		return
	}
	t.x.mode = d.sess.Mode
	t.x.system, t.x.tail = systemPrompt(t.agent, d)
	if t.req.Context != "" {
		t.x.tail = append(t.x.tail, coachd.TextBlock(t.req.Context))
	}
}

// now is the turn's clock in the user's zone, for its tools (ToolEnv.Now).
func (t *Turn) now() time.Time {
	if t.x.zone == nil {
		return t.r.cfg.Clock.Now().UTC()
	}
	return t.r.cfg.Clock.Now().In(t.x.zone)
}
