package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"slices"

	"github.com/coachd/coachd"
)

// maxAdmitReads bounds how often a turn reads its session again because
// another process's turn changed it between the read and the admission.
const maxAdmitReads = 5

// admit takes the session's slot in this process, reads the session and
// its history, and admits the turn in one write transaction
// (Store.AdmitTurn: the database lease and the budget reservation). The
// reads happen before the lease: in this process the slot excludes every
// other turn of the session, and a turn of another process that stored
// anything in between moves the session on, which the admission sees
// (coachd.ErrSessionChanged): the turn then reads it again.
func (r *Runner) admit(ctx context.Context, req TurnRequest) (*Turn, error) {
	held, err := r.guard.lock(ctx, req.User.ID, req.SessionID, req.Wait)
	if err != nil {
		return nil, err
	}
	for reads := 1; ; reads++ {
		t, err := r.admitOnce(ctx, req, held)
		if err == nil {
			return t, nil
		}
		switch {
		case errors.Is(err, coachd.ErrSessionChanged) && reads < maxAdmitReads:
			continue
		case errors.Is(err, coachd.ErrSessionChanged):
			err = coachd.Errorf(coachd.ETURNINPROGRESS, "the session keeps changing under another turn; retry")
		case coachd.ErrorCode(err) == coachd.ETURNINPROGRESS && req.Wait:
			// Another process runs the turn: poll its lease.
			if err = held.poll(ctx); err == nil {
				continue
			}
		}
		held.end(nil)
		return nil, err
	}
}

// admitOnce reads the session, checks the turn against it, prices it and
// admits it.
func (r *Runner) admitOnce(ctx context.Context, req TurnRequest, held *heldTurn) (*Turn, error) {
	st := r.cfg.Store
	// The session and its new messages, read together.
	sess, history, err := r.hist.loadTurn(ctx, st, req.User.ID, req.SessionID)
	if err != nil {
		return nil, err
	}
	ag, ok := r.cfg.Agents(sess.Agent)
	if !ok {
		return nil, coachd.Errorf(coachd.ECONFLICT, "the session's agent %q is no longer available", sess.Agent)
	}
	if _, err := r.agentFor(ag.Name, req.Trusted); err != nil {
		return nil, err
	}
	t := &Turn{r: r, req: req, agent: ag, sess: sess, tools: r.cfg.Tools, history: history}
	if len(req.Bound) > 0 {
		if t.tools, err = r.cfg.Tools.With(req.Bound...); err != nil {
			return nil, coachd.Errorf(coachd.EINTERNAL, "bind tools: %v", err)
		}
	}
	// The agent's MCP servers add their tools (started on first use).
	t.agent, t.tools = r.withMCP(ctx, t.agent, t.tools)
	if req.Resent && t.resends() {
		req.Message, req.Answer, req.Retry, req.RetryPartial = "", nil, true, true
		t.req = req
	}
	if err := t.checkSession(); err != nil {
		return nil, err
	}
	// A retry's history leaves out the partial reply it replaces, which
	// stays stored: it still takes room.
	t.unread = sess.MessageCount - int64(len(t.history))
	// The system prompt (skills, context sections) is part of what the
	// reservation prices, so it is assembled first, once for the turn.
	t.prepareSystem(ctx)
	owner := rand.Text()
	stream := req.Stream
	if stream != nil && stream.Keep > 0 {
		// The log's retention is applied by the turn's end (EndTurn),
		// not on the way to the first text.
		stream = &coachd.StreamStart{Owner: stream.Owner, Key: stream.Key, Hash: stream.Hash, Replaces: stream.Replaces}
	}
	// A new message (not a retry, not an answer to a paused tool) is
	// stored with the admission: one write before the model call where
	// there were two, and a session too full for it refuses the turn
	// before any token is spent. An answer is stored by the turn (begin),
	// after the paused call it may approve.
	var msg *coachd.Message
	if !req.Retry && sess.Pending == nil {
		msg = t.userMessage()
	}
	adm, err := st.AdmitTurn(ctx, coachd.TurnAdmission{
		Owner: owner, Until: r.cfg.Clock.Now().Add(r.cfg.TurnLease), Seen: sess, Reserve: t.reservation(ctx, msg),
		Stream: stream, Limits: admitLimits(req), Message: msg,
		// Only a new message's admission: the other turns write before
		// their first call (an answer, a retry's charge).
		Behind: req.Behind && msg != nil,
	})
	if err != nil {
		if adm != nil {
			r.undoAdmission(ctx, req.User.ID, sess.ID, owner, adm)
		}
		if coachd.ErrorCode(err) == coachd.EBUDGET {
			r.cfg.Observer.Rejected(coachd.EBUDGET)
		}
		return nil, err
	}
	held.leased(owner, r.cfg.TurnLease)
	t.resv, t.held, t.streamTurn, t.admitted = adm.Reservation, held, adm.StreamTurn, msg
	t.commit = adm.Commit
	return t, nil
}

// undoAdmission gives back what an admission whose COMMIT failed took, in
// case it was made (its answer lost on the way back): the lease is
// released and the reservation aborted, charging nothing, each of which
// finds nothing when it was not. Left, the hold stayed until it expired
// and the session busy until its lease ran out.
func (r *Runner) undoAdmission(ctx context.Context, userID, sessionID, owner string, adm *coachd.Admission) {
	wctx, cancel := persistCtx(ctx)
	defer cancel()
	st := r.cfg.Store
	if err := whileDown(wctx, func(ctx context.Context) error {
		return st.ReleaseTurn(ctx, userID, sessionID, owner)
	}); err != nil {
		r.cfg.Logger.Warn("releasing a failed admission's lease", "session", sessionID, "err", err)
	}
	if res := adm.Reservation; res != nil {
		err := whileDown(wctx, func(ctx context.Context) error {
			_, err := st.Settle(ctx, userID, res.ID, coachd.Spend{}, coachd.SettleAbort)
			return err
		})
		if err != nil && coachd.ErrorCode(err) != coachd.ENOTFOUND {
			r.cfg.Logger.Warn("aborting a failed admission's reservation", "reservation", res.ID, "err", err)
		}
	}
}

// Admitted waits for the turn's admission to be stored (with
// TurnRequest.Behind it commits behind the first model request) and
// returns its failure: the turn then stored nothing and sends nothing
// but its error. Safe to call while the turn runs.
func (t *Turn) Admitted() error {
	if t.commit == nil {
		return nil
	}
	return t.commit()
}

// admittedBehind, on the turn's goroutine, waits for an admission left
// behind the first model request (once: commit keeps its answer): a
// failure is the turn's write failure. The turn still settles its
// reservation: a COMMIT whose connection was lost may have been made
// (taken for never stored, its hold stayed until it expired and the
// model call it paid for was never charged), and one that was not is
// not found, which changes nothing.
func (t *Turn) admittedBehind() error {
	if t.commit == nil {
		return nil
	}
	return t.commit()
}

// logKeep is how many turns the event log keeps of the session (applied
// by the turn's end), 0 without a log.
func (t *Turn) logKeep() int {
	if t.streamTurn == 0 || t.req.Stream == nil {
		return 0
	}
	return t.req.Stream.Keep
}

// StreamTurn is the turn's number in the session's event log when its
// admission began the log (TurnRequest.Stream), 0 otherwise.
func (t *Turn) StreamTurn() int64 { return t.streamTurn }

// end stores the turn's last reply (held back by finish), settles its
// reservation and gives up its lease in one write (Store.EndTurn), then
// frees its slot. When that write fails, the reply is stored and the
// reservation settled apart, still before the lease goes; a reply that
// cannot be stored fails the turn.
func (t *Turn) end(ctx context.Context) {
	_ = t.sync() // a charge behind comes first; a failure was reported
	final := t.final
	t.final = nil
	t.mu.Lock()
	res, done := t.resv, t.settled
	t.mu.Unlock()
	if t.held == nil || res == nil || done {
		t.storeFinal(ctx, final)
		t.settle(ctx)
		t.release()
		return
	}
	// The reply takes its ids now: a write that failed may have stored
	// it (finalStored).
	for _, m := range final {
		if m.ID == "" {
			m.ID = coachd.NewID(coachd.PrefixMessage, t.r.cfg.Clock.Now())
		}
	}
	t.held.end(func(wctx context.Context) error {
		r, sess, err := t.r.cfg.Store.EndTurn(wctx, t.req.User.ID, coachd.TurnEnd{
			SessionID: t.sess.ID, Messages: final,
			ReservationID: res.ID, ReservationSeen: res, Spend: t.spend(), Mode: t.settleMode(), Owner: t.held.owner,
			LogTurn: t.streamTurn, LogKeep: t.logKeep(),
		})
		if err != nil {
			t.r.cfg.Logger.Warn("ending turn; storing and settling apart", "session", t.sess.ID, "err", err)
			if t.finalStored(ctx, final) {
				t.history = append(t.history, final...)
			} else {
				t.storeFinal(ctx, final)
			}
			t.settle(ctx)
			return err // the lease is released alone
		}
		t.mu.Lock()
		t.resv, t.settled = r, true
		t.mu.Unlock()
		if err := givenUp(final); err != nil {
			t.res.StopReason = t.fail(err) // settled and released: only the reply is not stored
			return nil
		}
		t.history = append(t.history, final...)
		t.r.hist.ended(t.req.User.ID, sess, t.history)
		return nil
	})
}

// finalStored reports whether the turn's reply, final, is stored: by a
// write whose COMMIT the server made but whose answer was lost on its
// way back (a restart, a failover), which the turn took for failed.
// Stored again, a reply was stored twice (or, holding the turn's
// announced message id, failed the turn with a conflict).
func (t *Turn) finalStored(ctx context.Context, final []*coachd.Message) bool {
	if len(final) == 0 {
		return false
	}
	wctx, cancel := persistCtx(ctx)
	defer cancel()
	return t.storedAs(wctx, t.sess.ID, t.sess.MessageCount, final)
}

// storeFinal stores the reply finish held back; one that cannot be
// stored fails the turn (its settlement then aborts).
func (t *Turn) storeFinal(ctx context.Context, final []*coachd.Message) {
	if len(final) == 0 {
		return
	}
	if err := t.append(ctx, final...); err != nil {
		t.res.StopReason = t.fail(err)
	}
}

// ResendsRunning reports whether req, refused because a turn runs on its
// session, sends that turn's own message again: the session's last user
// message, with no reply yet (UnansweredAt). Its client lost the turn's
// stream, which the server may not have noticed (seed 004's client gives
// up on a quiet stream and "If disconnected, create a new request"); the
// caller may stop the turn and run the message again (Wait).
func (r *Runner) ResendsRunning(ctx context.Context, req TurnRequest) bool {
	if !req.Resent || req.Wait || req.Retry || req.Answer != nil || req.Message == "" || len(req.Attachments) > 0 || req.SessionID == "" {
		return false
	}
	h, err := r.History(ctx, req.User.ID, req.SessionID)
	return err == nil && UnansweredAt(h, req.Message) >= 0
}

// admitLimits are the limits req's admission counts in: a turn that runs
// its stored message again (Retry, a resend) counts in no per-message
// limit, its message having been counted when it was sent.
func admitLimits(req TurnRequest) []coachd.LimitHit {
	if !req.Retry {
		return req.Limits
	}
	return slices.DeleteFunc(slices.Clone(req.Limits), func(h coachd.LimitHit) bool { return h.PerMessage })
}

// resends reports whether the turn's message, or its answer to a paused
// call, is the session's last one sent again, its turn having ended with
// no reply: after it come at most tool rounds (an assistant message, then
// its results) and a reply that broke off (stored partial). An answer is
// the same call's, with the same content; attachments are never taken
// for a resend.
func (t *Turn) resends() bool {
	a := t.req.Answer
	if t.sess.Pending != nil || len(t.req.Attachments) > 0 || (a == nil) == (t.req.Message == "") {
		return false
	}
	if a == nil {
		return UnansweredAt(t.history, t.req.Message) >= 0
	}
	return unansweredAt(t.history, func(m *coachd.Message) bool { return answers(m, a) }) >= 0
}

// UnansweredAt is the index in h, a session's messages, of its last user
// message when that says message and its turn ended with no reply: after
// it come at most tool rounds (an assistant message, then its results)
// and a reply that broke off (stored partial). -1 when there is none: the
// same words after a reply are a new message.
func UnansweredAt(h []*coachd.Message, message string) int {
	return unansweredAt(h, func(m *coachd.Message) bool {
		return m.Content == message && m.OnlyBlocks(coachd.BlockText)
	})
}

// unansweredAt is the index in h of the last user message that match
// takes, when its turn ended with no reply (UnansweredAt); -1 if none.
func unansweredAt(h []*coachd.Message, match func(*coachd.Message) bool) int {
	n := len(h)
	if n > 1 && h[n-1].Role == coachd.RoleAssistant && h[n-1].Partial {
		n--
	}
	for ; n > 0; n -= 2 {
		m := h[n-1]
		if m.Role == coachd.RoleUser && match(m) {
			return n - 1
		}
		// Back over a tool round: an assistant message, then its results.
		if n < 3 || m.Role != coachd.RoleUser || h[n-2].Role != coachd.RoleAssistant || !m.OnlyBlocks(coachd.BlockToolResult) {
			break
		}
	}
	return -1
}

// answers reports whether m holds a as the answer to its call.
func answers(m *coachd.Message, a *Answer) bool {
	want := coachd.ToolResultBlock(a.ToolUseID, answerText(a.Content), a.IsError)
	for _, b := range m.Blocks {
		if b.Type == coachd.BlockToolResult && b.ToolUseID == a.ToolUseID {
			return b.IsError == want.IsError && bytes.Equal(b.Content, want.Content)
		}
	}
	return false
}
