package agent

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/coachd/coachd"
)

// Turn is one prepared user turn holding its session's turn slot.
type Turn struct {
	r     *Runner
	req   TurnRequest
	agent *Agent
	sess  *coachd.Session
	held  *heldTurn // the session's slot and lease (admit.go)
	// streamTurn is the event log's turn begun with the admission.
	streamTurn int64
	final      []*coachd.Message // the last reply, stored by end
	tools      *Toolset          // the runner's, with the request's bound tools

	mu         sync.Mutex
	sink       coachd.EventSink
	seq        int64
	replied    int64 // events sent but turn_started (emitted)
	cancel     context.CancelCauseFunc
	history    []*coachd.Message
	unread     int64 // the session's messages history does not hold (room)
	usage      coachd.Usage
	billed     int64   // usage in the budget's unit (addUsage)
	cost       float64 // usage in US dollars at list prices
	res        Result
	savedReply bool
	lastReply  *coachd.Message // the turn's last assistant message (markStop)
	// lastIn is the last round's real input tokens and lastSize the size
	// of its request's parts, under reserve: max (noteInput).
	lastIn   int64
	lastSize *inputSize
	// Writes behind (persist.go), used by the turn's goroutine only.
	pending     *writeBehind        // the last write behind
	writeErr    error               // the first write behind that failed
	stored      []func()            // copy what the writes behind stored into the history
	admitted    *coachd.Message     // the user message stored with the admission; nil: begin stores it
	commit      func() error        // waits for an admission left behind (Admitted); nil when stored
	owed        bool                // turn_started not sent yet: the admission commits behind (begin)
	ack         sync.Once           // sends it (sendStarted)
	resv        *coachd.Reservation // nil when not reserved (Close before Prepare's reserve)
	charged     *coachd.Spend       // what the last round's write charges (roundBehind)
	round       *roundNotes         // the running round's staged notes (stage.go); nil: tools write themselves
	notesStaged int64               // notes the turn's rounds staged, counted against the cap (under the round's lock)
	settled     bool
	x           turnState // pack features: prompt, contracts, action tags (contract.go)
	firstText   time.Time // when the first text streamed, for time-to-first-token

	ap approvalState // a call waiting for, or resumed by, the user's approval (approve.go)
	// external is one call of an app's own loop (ExecuteTool), which
	// coachd does not see whole: an ordered must_call is not judged.
	external bool
}

// Result sums up a finished turn.
type Result struct {
	SessionID  string `json:"session_id"`
	MessageID  string `json:"message_id"`
	StopReason string `json:"stop_reason"`
	Text       string `json:"text"`
	// Output is the final reply's JSON object when the agent's
	// must_output contract held (Text runs every round's text together).
	Output    json.RawMessage   `json:"output,omitempty"`
	ToolCalls []coachd.ToolCall `json:"tool_calls"`
	Usage     coachd.Usage      `json:"usage"`
	Billed    int64             `json:"billed"` // Usage in the budget's unit
	LatencyMS int64             `json:"latency_ms"`
	Err       *coachd.Error     `json:"-"`
}

// errSinkGone cancels a turn whose client went away.
var errSinkGone = errors.New("agent: event receiver gone")

// Agent returns the agent running the turn.
func (t *Turn) Agent() *Agent { return t.agent }

// SessionID is the turn's session. Unlike the session itself, which the
// turn replaces as it changes it (a pause stores its interaction), it may
// be read while the turn runs.
func (t *Turn) SessionID() string { return t.req.SessionID }

// Close gives up a prepared turn without running it.
func (t *Turn) Close() {
	t.settle(context.Background())
	if t.streamTurn > 0 && t.Admitted() == nil {
		// The event log's turn begun with the admission ends empty:
		// readers pass over it.
		ctx, cancel := persistCtx(context.Background())
		if _, err := t.r.cfg.Store.AppendEvents(ctx, t.req.User.ID, t.sess.ID, t.streamTurn, nil, true); err != nil {
			t.r.cfg.Logger.Warn("ending an unrun turn's log", "session", t.sess.ID, "err", err)
		}
		cancel()
	}
	t.release()
}

// release gives up the session's slot and lease (once; end stores and
// settles first when the turn ran).
func (t *Turn) release() {
	if t.held != nil {
		t.held.end(nil)
	}
}

// lease is the owner of the turn's lease, which fences its logged
// messages (coachd.TurnEnd.Lease); "" without one.
func (t *Turn) lease() string {
	if t.held == nil {
		return ""
	}
	return t.held.owner
}

// emit numbers and sends an event; a failed send cancels the turn.
func (t *Turn) emit(ev coachd.Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ev.Type == coachd.EventTextDelta && t.firstText.IsZero() {
		t.firstText = time.Now()
	}
	t.seq++
	if ev.Type != coachd.EventTurnStarted {
		t.replied++
	}
	ev.Seq = t.seq
	if err := t.sink.Send(ev); err != nil && t.cancel != nil {
		t.cancel(errSinkGone)
	}
}

// Run runs the turn to its end, sending events to sink, and releases the
// session's slot. It never returns before the turn's history is stored in a
// valid state.
func (t *Turn) Run(ctx context.Context, sink coachd.EventSink) *Result {
	defer t.release()
	// Settles even when the turn panics (StopReason still empty: abort).
	defer t.settle(ctx)
	r, lim := t.r, t.agent.Limits.withDefaults()
	start, wall := r.cfg.Clock.Now(), time.Now()
	ctx, span := t.startTurnSpan(ctx)
	defer func() { endTurnSpan(span, t.res.StopReason, t.usage, t.res.Err) }()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ctx, cancelDeadline := context.WithDeadline(ctx, time.Now().Add(lim.MaxDuration))
	defer cancelDeadline()
	t.sink, t.cancel = sink, cancel
	t.res.SessionID = t.sess.ID
	t.res.MessageID = coachd.NewID(coachd.PrefixMessage, start)

	stop := t.begin(ctx)
	if stop == "" {
		t.compact(ctx)
		stop = t.loop(ctx, lim)
	}
	_ = t.acknowledge() // a turn that stopped before its first call; a failure is sync's
	if err := t.sync(); err != nil && stop != coachd.TurnError {
		stop = t.fail(err)
	}
	t.res.StopReason = stop
	t.markStop(ctx, stop)
	// Everything is stored and settled: the session is free before the
	// client hears the turn is over, so its next request finds it free.
	t.end(ctx)
	stop = t.res.StopReason // a last reply that could not be stored fails the turn
	t.res.Usage, t.res.Billed = t.usage, t.billed
	t.res.LatencyMS = r.cfg.Clock.Now().Sub(start).Milliseconds()
	if t.res.Err != nil {
		t.emit(coachd.Event{Type: coachd.EventError, Err: t.res.Err})
	}
	t.emit(coachd.Event{
		Type: coachd.EventTurnEnded, SessionID: t.sess.ID, StopReason: stop,
		Usage: t.turnUsage(), LatencyMS: t.res.LatencyMS,
	})
	var ttft time.Duration
	if !t.firstText.IsZero() {
		ttft = t.firstText.Sub(wall)
	}
	attrs := []any{"session", t.sess.ID, "user", t.req.User.ID, "stop", stop,
		"tokens", t.usage.Total(), "latency_ms", t.res.LatencyMS}
	if ttft > 0 {
		// A slow upstream shows here: the wait for the model's first text.
		attrs = append(attrs, "first_text_ms", ttft.Milliseconds())
	}
	if e := t.res.Err; e != nil {
		// Why it failed (an upstream error is logged nowhere else): the
		// code and the caller-safe message, never the user's words.
		attrs = append(attrs, "error", e.Code, "error_message", e.Message)
	}
	r.cfg.Logger.Info("turn ended", attrs...)
	r.cfg.Observer.TurnEnded(t.agent.Name, stop, t.usage, time.Since(wall), ttft)
	return &t.res
}

// begin stores the user's message (with the answer to a pending
// interaction, or its dismissal) unless the admission did, and adds it to
// the history.
func (t *Turn) begin(ctx context.Context) string {
	st := t.r.cfg.Store
	// turn_started acknowledges the user's message: it goes out once the
	// message is stored, so a crash can never lose a message the client
	// saw acknowledged (the chaos suite caught that once).
	started := t.startedEvent()
	if t.req.Retry {
		t.emit(started)
		return "" // the user message is the last one stored
	}
	if msg := t.admitted; msg != nil {
		// Stored with the admission; when that commits behind the first
		// model request, turn_started goes out once it is done.
		if t.commit == nil {
			t.emit(started)
		} else {
			t.owed = true
			go func() {
				if t.commit() == nil {
					t.sendStarted(started) // built here: the turn may replace t.sess
				}
			}()
		}
		t.history = append(t.history, msg)
		return ""
	}
	// An approved call runs first, under the turn's context (its
	// timeout, the client leaving), not the store's. Its events belong to
	// this turn, so turn_started goes before them: the answer is
	// acknowledged before it is stored here, and a crash during the call
	// leaves its tool_use answered as interrupted.
	// The turn goes on from the paused one: the calls that ran there
	// count for its contracts, and so does an interactive call the user
	// answered (not one the client could not show: is_error; an approved
	// call counts once it ran, decide).
	p := t.sess.Pending
	approval := p != nil && p.Kind == coachd.PendingApproval
	if p != nil {
		t.x.called = make(map[string]bool, len(p.Called)+1)
		for _, name := range p.Called {
			t.x.called[name] = true
		}
		if !approval && t.req.Answer != nil && !t.req.Answer.IsError {
			t.x.called[p.Name] = true
		}
	}
	if approval {
		t.emit(started)
		if err := t.decide(ctx, p); err != nil {
			return t.fail(err)
		}
	}
	wctx, done := persistCtx(ctx)
	defer done()
	msg := t.userMessage()
	if err := st.AppendMessages(wctx, t.req.User.ID, t.sess.ID, []*coachd.Message{msg}); err != nil {
		return t.fail(err)
	}
	if !approval {
		t.emit(started)
	}
	if p := t.sess.Pending; p != nil {
		upd := coachd.SessionUpdate{SetPending: true}
		// An approved call's record was cleared before the call ran.
		if !t.ap.cleared {
			if _, err := st.UpdateSession(wctx, t.req.User.ID, t.sess.ID, upd); err != nil {
				return t.fail(err)
			}
		}
		t.sess.Pending = nil
		t.recordAnswer(wctx, p.Name)
	}
	t.history = append(t.history, msg)
	return ""
}

// acknowledge sends turn_started when the admission committed behind the
// first model request (begin): once the commit is done, and before any
// other event of the turn. The commit's failure is the turn's: nothing
// was stored, and turn_started never goes out.
func (t *Turn) acknowledge() error {
	if !t.owed {
		return nil
	}
	if err := t.sync(); err != nil {
		return err
	}
	t.owed = false
	t.sendStarted(t.startedEvent())
	return nil
}

// sendStarted sends the turn_started an admission left behind owes, once,
// from whichever of the turn and begin's waiter sees the commit first.
func (t *Turn) sendStarted(ev coachd.Event) {
	t.ack.Do(func() { t.emit(ev) })
}

// startedEvent is the turn's turn_started.
func (t *Turn) startedEvent() coachd.Event {
	return coachd.Event{Type: coachd.EventTurnStarted, SessionID: t.sess.ID, MessageID: t.res.MessageID, Continues: t.req.Continues}
}

// recordAnswer lets the answered tool keep what it wants of the answer. A
// failure is logged: the answer itself is stored and the turn goes on.
func (t *Turn) recordAnswer(ctx context.Context, name string) {
	tool, ok := t.tool(name)
	rec, isRec := tool.(coachd.AnswerRecorder)
	if !ok || !isRec || t.req.Answer == nil || t.req.Answer.IsError || t.ap.answer != nil {
		return
	}
	env := coachd.ToolEnv{User: t.req.User, Session: t.sess, Store: t.r.cfg.Store, Emit: t.emit, Now: t.now}
	// Validated against the result schema: an integer written 3.0 is
	// handed over as 3, as a call's input is (runTool).
	if err := rec.RecordAnswer(ctx, env, plainIntegers(t.req.Answer.Content)); err != nil {
		t.r.cfg.Logger.Warn("record answer", "session", t.sess.ID, "tool", name, "err", err)
	}
}

// userMessage builds the turn's user message. A pending interaction is
// answered (or dismissed by a plain message) together with the results held
// from its round, so the round's tool_result message is whole.
func (t *Turn) userMessage() *coachd.Message {
	var blocks []coachd.Block
	if p := t.sess.Pending; p != nil {
		answer := t.pendingAnswer(p)
		for _, b := range p.Held {
			if b.ToolUseID == p.ToolUseID {
				b = answer
			}
			blocks = append(blocks, b)
		}
	}
	// Attachments go first: the API reads an image before the question
	// about it best.
	blocks = append(blocks, t.req.Attachments...)
	if t.req.Message != "" {
		blocks = append(blocks, coachd.TextBlock(t.req.Message))
	}
	return &coachd.Message{Role: coachd.RoleUser, Blocks: blocks}
}

// answerText is the tool_result text of an answer: a JSON string as is,
// anything else as compact JSON.
func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var v any
	if json.Unmarshal(raw, &v) == nil {
		b, _ := json.Marshal(v)
		return string(b)
	}
	return string(raw)
}

// fail records an error that ends the turn.
func (t *Turn) fail(err error) string {
	e := coachd.AsError(err)
	switch e.Code {
	case coachd.EINTERNAL:
		t.r.cfg.Logger.Error("turn failed", "session", t.sess.ID, "err", err)
		// The client gets none of the store's wording, and what to quote:
		// the line above names the session.
		e = &coachd.Error{Code: coachd.EINTERNAL, Message: "internal error; quote session " + t.sess.ID + " when reporting it", Err: err}
	case coachd.EUNAVAILABLE:
		// Retryable, and said so to the client as it is.
		t.r.cfg.Logger.Warn("turn failed: the database is unavailable", "session", t.sess.ID, "err", err)
	case coachd.EUPSTREAMBUSY, coachd.EUPSTREAMAUTH, coachd.EAPI, coachd.ETIMEOUT:
		t.r.cfg.Observer.UpstreamError(e.Code)
		if !errors.Is(err, context.Canceled) {
			// The client gets the code alone; the operator the cause
			// (refused, DNS, TLS, the upstream's own answer).
			t.r.cfg.Logger.Warn("model upstream failed", "session", t.sess.ID, "code", e.Code, "err", err)
		}
	}
	t.res.Err = e
	return coachd.TurnError
}

// turnUsage is what the turn has used so far. Its cost is the rounds'
// prices summed as floats, so it is rounded to a billionth of a dollar
// (the cheapest token is 25 of those): 0.004728, not 0.0047279999999999996.
func (t *Turn) turnUsage() *coachd.TurnUsage {
	return &coachd.TurnUsage{Usage: t.usage, TokensUsed: t.usage.Total(), BudgetRemaining: t.budgetRemaining(),
		Billed: t.billed, Unit: t.unit(), CostUSD: math.Round(t.cost*1e9) / 1e9}
}

// persistCtx outlives the turn's cancellation: what happened must be stored
// even when the client left.
func persistCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
}
