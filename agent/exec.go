package agent

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/stack"
	"go.opentelemetry.io/otel/codes"
)

// outcome is what one tool call of a round produced.
type outcome struct {
	block  coachd.Block // the tool_result
	failed bool
}

// runTools validates and runs a round's calls in parallel, each with its
// timeout and panic recovery, and returns the results in call order.
// Lifecycle calls are barriers: they run alone, after the calls before
// them and before the calls after them. The
// first interactive call, or call that needs approval (t.ap.reason says
// why), is not run: its index is returned and its result block is a
// placeholder answered later by the user.
func (t *Turn) runTools(ctx context.Context, lim Limits, calls []coachd.ToolCall) ([]outcome, int) {
	outs := make([]outcome, len(calls))
	interactive := -1
	t.ap.reason = ""
	var wg sync.WaitGroup
	for i, c := range calls {
		if t.forbidden(c.Name) {
			t.x.forbid++
			outs[i] = errOutcome(c.ID, fmt.Sprintf("refused: this agent's contract forbids calling %s; continue without it", c.Name))
			continue
		}
		tool, ok := t.tool(c.Name)
		if !ok {
			outs[i] = errOutcome(c.ID, fmt.Sprintf("unknown tool %q: this agent can call %v", c.Name, t.agent.Tools))
			continue
		}
		if err := t.tools.ValidateInput(c.Name, c.Input); err != nil {
			outs[i] = errOutcome(c.ID, InvalidInputText(c.Name, err))
			continue
		}
		ordered := !t.external && t.agent.Contracts.ordered(c.Name)
		if ordered {
			// An ordered contract call waits for the round's earlier calls,
			// which count as made, and is refused out of order before it
			// may wait for an approval (approved, it would run unordered).
			wg.Wait()
			t.markCalled(calls[:i], outs[:i], interactive)
			if first := t.agent.Contracts.outOfOrder(c.Name, t.x.called); first != "" {
				outs[i] = t.refuseOutOfOrder(c.ID, c.Name, first)
				continue
			}
		}
		if reason, ok := t.needsApproval(tool, c); ok {
			// Like an interactive call: it waits, the others run.
			if interactive >= 0 {
				outs[i] = errOutcome(c.ID, "not run: another call of this round waits for the user; call "+c.Name+" again once it is answered")
				continue
			}
			interactive, t.ap.reason = i, reason
			outs[i] = outcome{block: coachd.ToolResultBlock(c.ID, "", false)}
			continue
		}
		category := t.tools.Category(c.Name)
		if ordered && category != coachd.ToolInteractive {
			// It runs alone, like a lifecycle call; an interactive one
			// waits for the user below, as anywhere.
			outs[i] = t.runTool(ctx, lim.ToolTimeout, tool, c)
			continue
		}
		if category == coachd.ToolInteractive {
			if interactive >= 0 {
				outs[i] = errOutcome(c.ID, "not shown: only one interactive tool can wait for the user per round")
				continue
			}
			interactive = i
			outs[i] = outcome{block: coachd.ToolResultBlock(c.ID, "", false)}
			continue
		}
		if category == coachd.ToolLifecycle || len(calls) == 1 {
			// A lifecycle call changes the session (its mode, its status)
			// that later calls read: the calls before it finish first, and
			// it runs alone, so a round keeps the order the model wrote.
			// A round's only call has nothing to run beside. Both run on
			// the turn's goroutine, whose stack is grown already.
			wg.Wait()
			outs[i] = t.runTool(ctx, lim.ToolTimeout, tool, c)
			continue
		}
		wg.Add(1)
		go func() {
			stack.Grow() // runTool decodes and checks the call's input
			defer wg.Done()
			outs[i] = t.runTool(ctx, lim.ToolTimeout, tool, c)
		}()
	}
	wg.Wait()
	for i, c := range calls {
		if i == interactive {
			continue
		}
		b := outs[i].block
		t.emit(coachd.Event{Type: coachd.EventToolResult, ToolUseID: c.ID, ToolName: c.Name, Result: b.ResultText(), IsError: b.IsError})
	}
	return outs, interactive
}

// markCalled records the calls that ran successfully; the interactive
// call (index interactive) has not run yet.
func (t *Turn) markCalled(calls []coachd.ToolCall, outs []outcome, interactive int) {
	for i, c := range calls {
		if i != interactive && !outs[i].failed {
			t.x.called[c.Name] = true
		}
	}
}

func (t *Turn) tool(name string) (coachd.Tool, bool) {
	if !slices.Contains(t.agent.Tools, name) {
		return nil, false
	}
	return t.tools.Get(name)
}

func errOutcome(id, text string) outcome {
	return outcome{block: coachd.ToolResultBlock(id, text, true), failed: true}
}

// runTool runs one tool with a timeout. A panic or an error becomes an
// is_error result and a log line; a tool that ignores its context is left
// behind when the timeout passes.
func (t *Turn) runTool(ctx context.Context, timeout time.Duration, tool coachd.Tool, c coachd.ToolCall) (out outcome) {
	start := time.Now()
	ctx, span := startToolSpan(ctx, c)
	defer func() {
		t.r.cfg.Observer.ToolCalled(c.Name, !out.failed, time.Since(start))
		if out.failed {
			span.SetStatus(codes.Error, "tool error")
		}
		span.End()
	}()
	turn := ctx
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The call's logger is built only for a line to write: most calls
	// write none, and With formats its attributes at once. What it names
	// is read here: the tool's goroutine may log after the turn went on.
	base, sid := t.r.cfg.Logger, t.sess.ID
	log := func() *slog.Logger {
		return base.With("session", sid, "tool", c.Name, "tool_use_id", c.ID)
	}
	c.Input = plainIntegers(c.Input) // validated: an integer its schema took as 50.0 reaches a Go int as 50
	done := make(chan outcome, 1)
	// The call works on a copy of the session, and its events go out,
	// only while it is the turn's: a call left behind at its timeout (the
	// turn went on, or ended) was answered "did not finish", and must not
	// change the turn's mode, nor tell the client it did, later.
	call := &toolCall{t: t, sess: *t.sess, round: t.round}
	env := coachd.ToolEnv{User: t.req.User, Session: &call.sess, Store: t.r.cfg.Store, Emit: call.emit, Now: t.now}
	if _, ok := tool.(coachd.OutcomeRecorder); ok {
		env.Finish = call.finish // a func value: one allocation, for these alone
	}
	if t.round != nil {
		env.StageNote = call.stageNote
	}
	go func() {
		stack.Grow() // a tool may write to the store
		defer func() {
			if p := recover(); p != nil {
				log().Error("tool panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				done <- errOutcome(c.ID, fmt.Sprintf("%s failed with an internal error", c.Name))
			}
		}()
		res, err := tool.Execute(ctx, c, env)
		if err != nil {
			if coachd.ErrorCode(err) == coachd.EINTERNAL {
				log().Error("tool failed", "err", err)
			}
			done <- errOutcome(c.ID, fmt.Sprintf("%s failed: %s", c.Name, coachd.ErrorMessage(err)))
			return
		}
		done <- outcome{block: coachd.ToolResultBlock(c.ID, res.Content, res.IsError), failed: res.IsError}
	}()
	select {
	case o := <-done:
		if o.failed && turn.Err() != nil {
			// The turn ended under it (its client left, a stop, the
			// turn's deadline): its failure may be that, not its own.
			return errOutcome(c.ID, InterruptedText)
		}
		t.keepSession(c.Name, &call.sess)
		return o
	case <-ctx.Done():
		call.live.Lock()
		select {
		case o := <-done: // it finished as the time ran out
			call.live.Unlock()
			t.keepSession(c.Name, &call.sess)
			return o
		default:
		}
		if call.finished {
			// It handed its result over (Finish) as the time ran out and
			// is returning it: what it recorded says it finished.
			call.live.Unlock()
			o := <-done
			t.keepSession(c.Name, &call.sess)
			return o
		}
		call.abandoned = true
		call.live.Unlock()
		if turn.Err() != nil {
			// Not its timeout: the model must not be told it reached one.
			return errOutcome(c.ID, InterruptedText)
		}
		log().Warn("tool timed out", "timeout", timeout)
		return errOutcome(c.ID, fmt.Sprintf("%s did not finish within %s", c.Name, timeout))
	}
}

// toolCall is what a tool's call holds apart from its turn: a copy of the
// session, its round's notes, and whether the turn left it behind (then
// its events are dropped and its notes refused). One allocation a call.
type toolCall struct {
	t         *Turn
	sess      coachd.Session
	round     *roundNotes
	live      sync.Mutex
	abandoned bool
	finished  bool // it handed its result over (ToolEnv.Finish)
}

// finish is the call's ToolEnv.Finish: the turn takes the result unless
// it has left the call behind already.
func (c *toolCall) finish() bool {
	c.live.Lock()
	defer c.live.Unlock()
	c.finished = !c.abandoned
	return c.finished
}

func (c *toolCall) emit(ev coachd.Event) {
	c.live.Lock()
	defer c.live.Unlock()
	if !c.abandoned {
		c.t.emit(ev)
	}
}

// stageNote is the call's ToolEnv.StageNote: a call the turn left behind
// (answered "did not finish") stages nothing into its round, which is
// stored once the round's other calls are done.
func (c *toolCall) stageNote(n *coachd.Note) error {
	c.live.Lock()
	defer c.live.Unlock()
	if c.abandoned {
		return coachd.Errorf(coachd.ECONFLICT, "the call did not finish in time")
	}
	return c.t.stageNote(c.round, n)
}

// keepSession makes what a lifecycle call that finished did to its copy
// of the session (its mode, its status) the turn's. Only a lifecycle call
// changes the session, and it runs alone.
func (t *Turn) keepSession(name string, sess *coachd.Session) {
	if t.tools.Category(name) != coachd.ToolLifecycle {
		return
	}
	t.sess.Mode, t.sess.Status = sess.Mode, sess.Status
}
