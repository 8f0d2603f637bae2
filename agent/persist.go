package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/internal/backoff"
	"github.com/coachd/coachd/internal/stack"
)

// whileDown runs write, a write that may run twice (a settlement of a
// cumulative spend, a lease's release), again while the store could not
// reach its database (EUNAVAILABLE: a restart, a failover), until ctx
// is done. Tried once, a turn that ended while the
// database was restarting left its hold until it expired, its usage
// never charged, and its session busy until its lease ran out.
func whileDown(ctx context.Context, write func(context.Context) error) error {
	return backoff.Do(ctx, 10*time.Millisecond, time.Second, func() (bool, error) {
		err := write(ctx)
		var e *coachd.Error
		return err != nil && errors.As(err, &e) && e.Code == coachd.EUNAVAILABLE, err
	})
}

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
	t.lastReply = m
	return m
}

// markStop records why the turn stopped on its last reply when the
// model's stop reason there does not say it (a limit of the turn, a
// stop, the budget): the history then says what the turn's end said.
// The reply finish held back takes it before it is stored; one stored
// already is marked in the store. A failure is logged: the turn's end
// still said it.
func (t *Turn) markStop(ctx context.Context, stop string) {
	switch stop {
	case "", coachd.TurnEndTurn, coachd.TurnAwaitingInput, coachd.TurnError, coachd.TurnMaxTokens, coachd.TurnRefusal:
		return
	}
	m := t.lastReply
	if m == nil {
		return // the turn stored no reply to say it on
	}
	meta := map[string]json.RawMessage{}
	if json.Unmarshal(m.Metadata, &meta) != nil || meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta["turn_stop_reason"], _ = json.Marshal(stop)
	raw, _ := json.Marshal(meta)
	m.Metadata = raw // the turn's own message: its writes are done (sync)
	if slices.Contains(t.final, m) {
		return // stored by end, with it
	}
	if m.ID == "" || m.Seq == 0 {
		return // never stored (a write that failed)
	}
	wctx, done := persistCtx(ctx)
	defer done()
	if err := t.r.cfg.Store.SetTurnStop(wctx, t.req.User.ID, t.sess.ID, m.ID, stop); err != nil {
		t.r.cfg.Logger.Warn("recording the turn's stop reason", "session", t.sess.ID, "stop", stop, "err", err)
	}
}

// append stores messages atomically, after the writes still behind, and
// adds them to the turn's history.
func (t *Turn) append(ctx context.Context, msgs ...*coachd.Message) error {
	if err := t.sync(); err != nil {
		return err
	}
	wctx, done := persistCtx(ctx)
	defer done()
	if err := t.store(wctx, msgs); err != nil {
		return err
	}
	t.history = append(t.history, msgs...)
	return nil
}

// errGivenUp fails a turn whose messages were not stored because its
// readers gave it up (a partition between its process and the database
// longer than their wait): they told their clients turn_interrupted
// (stream.CodeInterrupted), and so is its own; or because it stalled
// past its lease and another replica took the session for a new turn.
var errGivenUp = &coachd.Error{Code: "turn_interrupted", Retryable: true,
	Message: "the turn was interrupted: its server lost the database for too long, and its reply was not stored"}

// store appends msgs (as AppendMessages). A turn of the event log stores
// them only while the log's turn has not ended (TurnEnd.LogTurn, checked
// in the same write): none is stored once its readers gave it up, which
// is errGivenUp.
func (t *Turn) store(ctx context.Context, msgs []*coachd.Message) error {
	if t.streamTurn == 0 {
		return t.r.cfg.Store.AppendMessages(ctx, t.req.User.ID, t.sess.ID, msgs)
	}
	if _, _, err := t.r.cfg.Store.EndTurn(ctx, t.req.User.ID, coachd.TurnEnd{SessionID: t.sess.ID, Messages: msgs, LogTurn: t.streamTurn, Lease: t.lease()}); err != nil {
		return err
	}
	return givenUp(msgs)
}

// givenUp is errGivenUp when msgs, written with their log's turn as
// fence, were not stored (TurnEnd.Messages left as they came).
func givenUp(msgs []*coachd.Message) error {
	if len(msgs) > 0 && msgs[0].Seq == 0 {
		return errGivenUp
	}
	return nil
}

// writeBehind is a store write the turn does not wait for.
type writeBehind struct {
	done chan struct{}
	err  error
}

// appendBehind stores messages like append, but the write runs while the
// turn goes on (the next model call starts at once) instead of before.
// Durability is unchanged where it matters: no text of the reply reaches
// the client before the writes behind it are stored (stream syncs before
// its first text), and tools, pauses, synchronous writes and the turn's
// end wait for them too. A failed write fails the turn at that point.
func (t *Turn) appendBehind(ctx context.Context, msgs ...*coachd.Message) {
	t.writeBehind(ctx, t.store, msgs)
}

// roundBehind stores a tool round like appendBehind and, in the same
// write transaction (Store.EndTurn without an owner), charges the turn's
// spend so far to its reservation: the round and its charge are stored
// together or not at all, one transaction where there were two, and the
// next round's roundBudget finds nothing left to charge. A charge that
// fails (a database error, a reservation gone) fails the round's write
// and so the turn, at its next sync; a charge of its own was only logged.
// A turn without a reservation to charge (none, or a free preview) only
// appends. The notes the round's tools staged (stage.go) are created in
// the same write, charged or not.
func (t *Turn) roundBehind(ctx context.Context, notes []*coachd.Note, msgs ...*coachd.Message) {
	t.mu.Lock()
	resv := t.resv // a charge behind may be replacing it
	t.mu.Unlock()
	if resv == nil || resv.FreePreview {
		if len(notes) == 0 {
			t.appendBehind(ctx, msgs...)
			return
		}
		t.writeBehind(ctx, func(wctx context.Context, copies []*coachd.Message) error {
			_, _, err := t.r.cfg.Store.EndTurn(wctx, t.req.User.ID, coachd.TurnEnd{SessionID: t.sess.ID, Notes: notes, Messages: copies, LogTurn: t.streamTurn, Lease: t.lease()})
			return cmp.Or(err, givenUp(copies))
		}, msgs)
		return
	}
	id, spend := resv.ID, t.spend()
	t.charged = &spend
	t.writeBehind(ctx, func(wctx context.Context, copies []*coachd.Message) error {
		res, _, err := t.r.cfg.Store.EndTurn(wctx, t.req.User.ID, coachd.TurnEnd{
			SessionID: t.sess.ID, Notes: notes, Messages: copies, ReservationID: id, ReservationSeen: resv, Spend: spend,
			Mode: coachd.SettleCharge, LogTurn: t.streamTurn, Lease: t.lease(),
		})
		if err != nil {
			return err
		}
		if err := givenUp(copies); err != nil {
			return err // charged all the same
		}
		t.mu.Lock()
		t.resv = res
		t.mu.Unlock()
		return nil
	}, msgs)
}

// writeBehind runs write behind (see appendBehind) on copies of msgs.
// A write that failed may have been made all the same (its COMMIT made
// by the server, its answer lost on the way back: a restart, a
// failover): when its messages are stored (storedAs, by the ids they
// take here) it succeeded. Taken for failed, the turn ended with an
// internal error though its round was stored, and the reply of the
// model call after it, charged, never reached the user.
func (t *Turn) writeBehind(ctx context.Context, write func(context.Context, []*coachd.Message) error, msgs []*coachd.Message) {
	t.history = append(t.history, msgs...)
	// The store fills in seqs on what it writes: copies, so the turn may
	// read its history meanwhile (a message not stored yet has seq 0);
	// sync copies them back.
	copies := make([]*coachd.Message, len(msgs))
	for i, m := range msgs {
		c := *m
		if c.ID == "" {
			c.ID = coachd.NewID(coachd.PrefixMessage, t.r.cfg.Clock.Now())
		}
		copies[i] = &c
	}
	sessionID, after := t.sess.ID, t.sess.MessageCount
	t.behind(ctx, func(wctx context.Context) error {
		err := write(wctx, copies)
		if err != nil && t.storedAs(wctx, sessionID, after, copies) {
			t.r.cfg.Logger.Warn("a write taken for failed was made; the turn goes on", "session", sessionID, "err", err)
			return nil
		}
		return err
	})
	t.stored = append(t.stored, func() {
		for i, m := range msgs {
			if c := copies[i]; c.Seq != 0 {
				m.ID, m.SessionID, m.Seq, m.CreatedAt = c.ID, c.SessionID, c.Seq, c.CreatedAt
			}
		}
	})
}

// behind runs write after the turn's earlier writes behind, without
// waiting for it. Only the turn's own goroutine calls it.
func (t *Turn) behind(ctx context.Context, write func(context.Context) error) {
	prev, w := t.pending, &writeBehind{done: make(chan struct{})}
	t.pending = w
	go func() {
		stack.Grow() // it writes to the store
		defer close(w.done)
		if prev != nil {
			if <-prev.done; prev.err != nil {
				w.err = prev.err // not written: the turn fails at its next sync
				return
			}
		}
		wctx, done := persistCtx(ctx)
		defer done()
		w.err = write(wctx)
	}()
}

// storedAs reports whether msgs, with their ids, are stored among the
// session's messages after seq after, and if so gives them what the
// store gave them (seq, time). Any goroutine may call it.
func (t *Turn) storedAs(ctx context.Context, sessionID string, after int64, msgs []*coachd.Message) bool {
	if len(msgs) == 0 || msgs[0].ID == "" {
		return false
	}
	_, stored, err := t.r.cfg.Store.ReadTurn(ctx, t.req.User.ID, sessionID, after)
	if err != nil {
		return false // the write's own error says why
	}
	byID := make(map[string]*coachd.Message, len(stored))
	for _, m := range stored {
		byID[m.ID] = m
	}
	for _, m := range msgs {
		if byID[m.ID] == nil {
			return false
		}
	}
	for _, m := range msgs {
		s := byID[m.ID]
		m.SessionID, m.Seq, m.CreatedAt = s.SessionID, s.Seq, s.CreatedAt
	}
	return true
}

// sync waits for the writes behind and returns the first failure, every
// time once there was one.
func (t *Turn) sync() error {
	if err := t.admittedBehind(); err != nil && t.writeErr == nil {
		t.writeErr = err
	}
	if w := t.pending; w != nil {
		<-w.done
		t.pending = nil
		if t.writeErr == nil {
			t.writeErr = w.err
		}
		for _, f := range t.stored {
			f()
		}
		t.stored = nil
	}
	return t.writeErr
}

// finish stores a final response. Tool calls it holds (cut by max_tokens or
// a refusal, or made in a round offered none) are answered as interrupted
// so history stays valid; with room in the session for the reply alone,
// not their results too, the reply is stored without them (they were
// never run) or, when they were all it said, not at all.
func (t *Turn) finish(ctx context.Context, resp *coachd.ModelResponse, stop string) string {
	calls := toolUses(resp.Blocks)
	// The client saw these calls start (tool_call_started): each gets its
	// end, as a call that ran would.
	for _, c := range calls {
		t.emit(coachd.Event{Type: coachd.EventToolResult, ToolUseID: c.ID, ToolName: c.Name, Result: "not run: the reply ended (" + stop + ") before this call was ready", IsError: true, Cut: true})
	}
	if len(calls) > 0 && t.room() < 2 {
		resp, calls = withoutCalls(resp), nil
		if coachd.BlocksText(resp.Blocks) == "" {
			return stop
		}
	}
	msgs := []*coachd.Message{t.assistantMessage(resp, false)}
	if stop == coachd.TurnEndTurn && len(calls) == 0 && t.held != nil {
		// The turn's last write: stored with its settlement (end).
		if err := t.sync(); err != nil {
			return t.fail(err)
		}
		t.final = msgs
		return stop
	}
	if len(calls) > 0 {
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: interruptedCalls(calls)})
	}
	if err := t.append(ctx, msgs...); err != nil {
		return t.fail(err)
	}
	return stop
}

// withoutCalls is resp without its tool calls.
func withoutCalls(resp *coachd.ModelResponse) *coachd.ModelResponse {
	out := *resp
	out.Blocks = slices.DeleteFunc(slices.Clone(resp.Blocks), func(b coachd.Block) bool { return b.Type == coachd.BlockToolUse })
	return &out
}

// savePartial stores what the model said before the stream broke: its text,
// marked partial. Unsigned thinking is dropped. A tool call the model was
// writing when the turn was stopped (Stop, the client gone) or the
// upstream broke the stream (an error event, a cut, a malformed input)
// is kept: the user saw its card (tool_call_started), which a reload
// would lose. It is answered as interrupted, as finish answers a call
// cut by max_tokens, so history stays valid, with an input the API takes
// (an object); without room for the result, it is dropped.
func (t *Turn) savePartial(ctx context.Context, resp *coachd.ModelResponse) {
	var blocks []coachd.Block
	for _, b := range resp.Blocks {
		switch {
		case b.Type == coachd.BlockText && b.Text != "":
			blocks = append(blocks, b)
		case b.Type == coachd.BlockToolUse && b.ID != "":
			if in := bytes.TrimSpace(b.Input); len(in) == 0 || in[0] != '{' || !coachd.ValidJSON(in) {
				b.Input = json.RawMessage(`{}`)
			}
			blocks = append(blocks, b)
		}
	}
	part := *resp
	part.Blocks = blocks
	calls := toolUses(blocks)
	for _, c := range calls {
		t.emit(coachd.Event{Type: coachd.EventToolResult, ToolUseID: c.ID, ToolName: c.Name, Result: "not run: the reply ended before this call was ready", IsError: true, Cut: true})
	}
	if len(calls) > 0 && t.room() < 2 {
		part, calls = *withoutCalls(&part), nil
	}
	if len(part.Blocks) == 0 {
		return
	}
	msgs := []*coachd.Message{t.assistantMessage(&part, true)}
	if len(calls) > 0 {
		msgs = append(msgs, &coachd.Message{Role: coachd.RoleUser, Blocks: interruptedCalls(calls)})
	}
	if err := t.append(ctx, msgs...); err != nil {
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
	notes := t.round.take()
	t.round = nil
	if interactive < 0 {
		t.roundBehind(ctx, notes, asst, &coachd.Message{Role: coachd.RoleUser, Blocks: results})
		return ""
	}
	if err := t.storeNotes(ctx, notes); err != nil {
		return t.fail(err)
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
