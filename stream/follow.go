package stream

import (
	"context"
	"time"

	"github.com/coachd/coachd"
)

// Follow sends the session's events after the id after, in order, with no
// gap and no duplicate: first what the log (or this process) already has,
// then each event as it happens. With turn set it follows that turn only
// and returns nil after its last event; otherwise it follows the session,
// turn after turn, until ctx is done or send fails (whose error it
// returns). A turn whose process stopped showing life for DeadAfter ends
// with a retryable turn_interrupted error. On Shutdown the reader gets a
// retryable server_shutdown error carrying the last id it was sent, and
// Follow returns ErrShutdown; when the log cannot be read (the database
// unavailable), a retryable unavailable error carrying it, and Follow
// returns that error.
func (h *Hub) Follow(ctx context.Context, userID, sessionID string, after coachd.EventID, turn int64, send func(coachd.Event) error) error {
	return h.FollowBuffered(ctx, userID, sessionID, after, turn, send, func() error { return nil })
}

// FollowBuffered is Follow for a sender that may hold the events it is
// given: flush is called whenever Follow has no further event at hand
// (before it waits, and before it returns), so deltas that arrived
// together go out in one write and the first of them is not delayed.
func (h *Hub) FollowBuffered(ctx context.Context, userID, sessionID string, after coachd.EventID, turn int64, send func(coachd.Event) error, flush func() error) (err error) {
	defer func() {
		// The last events (or the shutdown notice) go out; a failure
		// to send them is the result unless something failed first.
		if ferr := flush(); err == nil {
			err = ferr
		}
	}()
	for {
		idle, err := h.follow(ctx, userID, sessionID, after, turn, send, flush)
		if err != nil || idle == nil {
			return err // idle == nil: the followed turn is over
		}
		// Nothing runs: wait, querying nothing, until something may
		// have begun (Park wakes on ctx and Shutdown too).
		woke := make(chan struct{})
		h.Park(ctx, userID, sessionID, *idle, func() { close(woke) })
		<-woke
		if err := ctx.Err(); err != nil {
			return err
		}
		after = idle.After
	}
}

// follow sends events as Follow does until the session is idle: then it
// returns where it stopped (everything flushed). Errors are Follow's.
func (h *Hub) follow(ctx context.Context, userID, sessionID string, after coachd.EventID, turn int64, send func(coachd.Event) error, flush func() error) (_ *Idle, err error) {
	cur := after
	defer func() {
		if coachd.ErrorCode(err) == coachd.EUNAVAILABLE {
			// The database is down (a restart, a failover): the reader
			// is told to come back, and from where.
			err = h.unavailable(err, cur, send)
		}
	}()
	if turn > 0 && cur.Turn < turn {
		cur = coachd.EventID{Turn: turn}
	}
	// whole is the latest turn the reader knows to be whole: it sent the
	// turn's end, or found the turn ended in the log.
	var whole int64
	// out sends one event unless it was sent already; it reports whether
	// the followed turn is over.
	out := func(ev coachd.Event) (bool, error) {
		if turn > 0 && ev.Turn != turn {
			return ev.Turn > turn, nil
		}
		if !cur.Before(ev.ID()) {
			return false, nil
		}
		if err := send(ev); err != nil {
			return false, err
		}
		cur = ev.ID()
		if ev.Terminal() {
			whole = ev.Turn
		}
		return turn > 0 && ev.Terminal(), nil
	}
	// enter is asked before the reader goes on to the turn next (or past
	// the followed turn): the turn before must be whole in the log first.
	// A turn gives up its session before its last events are logged, so
	// the next turn may begin, here or on another replica, while the log
	// still lacks them. It reports whether it waited, when the log must be
	// read again.
	enter := func(next int64) (bool, error) {
		prev := next - 1
		if turn > 0 {
			prev = turn
		}
		if prev < cur.Turn || prev <= whole {
			return false, nil
		}
		if err := h.turnLogged(ctx, userID, sessionID, prev, cur); err != nil {
			return false, err
		}
		whole = prev
		return true, nil
	}
	// page sends a page of the log's events, those before the turn stop
	// when it is not 0: it reports whether the followed turn is over, and
	// whether the log must be read again (enter waited).
	page := func(evs []coachd.Event, stop int64) (over, again bool, err error) {
		for _, ev := range evs {
			if stop > 0 && ev.Turn >= stop {
				break
			}
			if ev.Turn > cur.Turn {
				if again, err := enter(ev.Turn); err != nil || again {
					return false, again, err
				}
			}
			if over, err := out(ev); err != nil || over {
				return over, false, err
			}
		}
		return false, false, nil
	}
	var givenUp int64
	var silence watch
	// settled is the latest turn the previous look at the log found
	// ended (0: none), -1 if it found one running. The session is idle
	// once a read of the log after such a look found nothing new and
	// the turn is still the latest: events logged between the read and
	// the look are not missed.
	settled := int64(-1)
	timer := time.NewTimer(h.PollEvery)
	defer timer.Stop()
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		select {
		case <-h.shutdown:
			// Parked followers all wake on Shutdown: a session's
			// followers end without reading the log.
			if l := h.local(sessionID); l == nil && turn == 0 {
				return nil, h.ending(ErrShutdown, cur, send)
			}
		default:
		}
		if l := h.local(sessionID); l != nil && l.user == userID && l.turn >= cur.Turn && (turn == 0 || l.turn == turn) {
			// The older turns' events, from the log, then this one's
			// from memory.
			for cur.Turn < l.turn {
				evs, err := h.store.Events(ctx, userID, sessionID, cur, pageSize)
				if err != nil {
					return nil, err
				}
				_, again, err := page(evs, l.turn)
				if err != nil {
					return nil, h.ending(err, cur, send)
				}
				if again || len(evs) == pageSize && evs[len(evs)-1].Turn < l.turn {
					continue
				}
				if again, err := enter(l.turn); err != nil || again {
					if err != nil {
						return nil, h.ending(err, cur, send)
					}
					continue
				}
				cur = coachd.EventID{Turn: l.turn}
			}
			over, err := h.followLive(ctx, l, out, flush)
			if err != nil || over {
				return nil, h.ending(err, cur, send)
			}
			settled = -1
			continue
		}
		evs, err := h.store.Events(ctx, userID, sessionID, cur, pageSize)
		if err != nil {
			return nil, err
		}
		over, again, err := page(evs, 0)
		if err != nil {
			return nil, h.ending(err, cur, send)
		}
		if over {
			return nil, nil
		}
		if again || len(evs) == pageSize {
			continue
		}
		tl, err := h.store.LatestTurn(ctx, userID, sessionID)
		if err != nil {
			return nil, err
		}
		if tl.Turn > 0 && !tl.Ended && tl.Turn >= cur.Turn && tl.Turn != givenUp && silence.dead(tl, h.DeadAfter) {
			given, err := h.giveUp(ctx, userID, sessionID, tl, cur)
			if err != nil {
				return nil, err
			}
			if given {
				givenUp = tl.Turn
				settled = -1
				continue
			}
			// It showed life (or ended) since: watched again, after
			// the wait below.
		}
		if err := flush(); err != nil {
			return nil, err
		}
		if tl.Turn == 0 || tl.Ended {
			if len(evs) == 0 && settled == tl.Turn {
				select {
				case <-h.shutdown:
					return nil, h.ending(ErrShutdown, cur, send)
				default:
				}
				return &Idle{After: cur, latest: tl.Turn}, nil
			}
			settled = tl.Turn
			continue // read the log once more, after this look
		}
		settled = -1
		// A turn runs on another replica: its events are read every
		// PollEvery (a turn beginning here wakes the reader at once).
		timer.Reset(h.PollEvery)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.shutdown:
			return nil, h.ending(ErrShutdown, cur, send)
		case <-h.waitBegin():
		case <-timer.C:
		}
	}
}

// followLive sends the events of a turn running here as they come; it
// returns once the turn's last event went out, or the reader's followed
// turn is over.
func (h *Hub) followLive(ctx context.Context, l *Live, out func(coachd.Event) (bool, error), flush func() error) (bool, error) {
	i := 0
	for {
		evs, ended, changed := l.snapshot(i)
		for _, ev := range evs {
			i++
			over, err := out(ev)
			if err != nil || over {
				return over, err
			}
		}
		if ended && len(evs) == 0 {
			return false, nil
		}
		if len(evs) > 0 {
			continue
		}
		if err := flush(); err != nil {
			return false, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false, ctx.Err()
		case <-h.shutdown:
			return false, ErrShutdown
		}
	}
}

// turnLogged waits until the session's turn n is whole in the log: ended
// (its last events are logged with its end), gone (pruned), or given up
// when its process shows no life for DeadAfter. cur is the reader's place.
func (h *Hub) turnLogged(ctx context.Context, userID, sessionID string, n int64, cur coachd.EventID) error {
	var timer *time.Timer
	var silence watch
	for {
		tl, err := h.store.TurnLogAt(ctx, userID, sessionID, n)
		if err != nil || tl.Turn == 0 || tl.Ended {
			return err
		}
		if silence.dead(tl, h.DeadAfter) {
			if given, err := h.giveUp(ctx, userID, sessionID, tl, cur); err != nil || given {
				return err
			}
		}
		if timer == nil {
			timer = time.NewTimer(h.PollEvery)
			defer timer.Stop()
		} else {
			timer.Reset(h.PollEvery)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-h.shutdown:
			return ErrShutdown
		case <-timer.C:
		}
	}
}

// watch is a reader's view of a running turn's silence. The database's
// clock alone (TurnLog.Silent) also counts time the turn's process could
// not write: a failover to a standby (whose postmaster started long ago),
// a partition between that process and the database. A reader that looks
// first just after it, or after its own reads stalled, would give up a
// turn whose next sign of life is a moment away; so the turn must also
// have stayed silent for deadAfter while this reader watched.
type watch struct {
	turn        int64
	alive       time.Time // the turn's last sign of life, as last seen
	since, seen time.Time // when the reader began watching it so; its last look
}

// dead reports whether the turn tl, as the reader sees it now, shows no
// life for deadAfter.
func (w *watch) dead(tl coachd.TurnLog, deadAfter time.Duration) bool {
	now := time.Now()
	if w.turn != tl.Turn || !w.alive.Equal(tl.AliveAt) || now.Sub(w.seen) > deadAfter/2 {
		// A new turn, a sign of life, or a gap in the reader's own
		// looks (it could not read): watching begins again.
		w.turn, w.alive, w.since = tl.Turn, tl.AliveAt, now
	}
	w.seen = now
	return tl.Silent > deadAfter && now.Sub(w.since) > deadAfter
}

// giveUp logs the interrupted ending of the turn tl, whose process shows
// no life, so that every reader of the turn sees the same: after the
// turn's last event in the log (cur is the reader's place, in the turn or
// before it). It reports false when the turn showed life or ended since
// tl was read: then nothing is logged.
func (h *Hub) giveUp(ctx context.Context, userID, sessionID string, tl coachd.TurnLog, cur coachd.EventID) (bool, error) {
	last := coachd.EventID{Turn: tl.Turn}
	if cur.Turn == tl.Turn {
		last = cur
	}
	for {
		evs, err := h.store.Events(ctx, userID, sessionID, last, pageSize)
		if err != nil {
			return false, err
		}
		for _, ev := range evs {
			if ev.Turn == tl.Turn {
				last = ev.ID()
			}
		}
		if len(evs) < pageSize || evs[len(evs)-1].Turn != tl.Turn {
			break
		}
	}
	given, err := h.store.GiveUpTurn(ctx, userID, sessionID, tl.Turn, tl.AliveAt, interrupted(tl.Turn, last.Seq, "the server running this turn stopped"))
	if given {
		h.logger.Warn("turn given up: its process shows no life", "session", sessionID, "turn", tl.Turn, "alive_at", tl.AliveAt)
	}
	return given, err
}

// ending turns Shutdown into the reader's last event.
func (h *Hub) ending(err error, cur coachd.EventID, send func(coachd.Event) error) error {
	if err != ErrShutdown {
		return err
	}
	send(coachd.Event{Type: coachd.EventError, Turn: cur.Turn, Seq: cur.Seq, Err: &coachd.Error{
		Code: CodeShutdown, Message: "the server is restarting: reconnect with Last-Event-ID " + cur.String(),
		Retryable: true, Extra: map[string]any{"last_event_id": cur.String()}}})
	return ErrShutdown
}

// unavailable sends the reader, whose last event was cur, a retryable
// unavailable error saying where to resume, and returns err.
func (h *Hub) unavailable(err error, cur coachd.EventID, send func(coachd.Event) error) error {
	h.logger.Warn("a session's follower ends: the database is unavailable", "last_event_id", cur.String(), "err", err)
	send(coachd.Event{Type: coachd.EventError, Turn: cur.Turn, Seq: cur.Seq, Err: &coachd.Error{
		Code: coachd.EUNAVAILABLE, Message: "the database is unavailable for now: reconnect with Last-Event-ID " + cur.String(),
		Retryable: true, RetryAfter: time.Second, Extra: map[string]any{"last_event_id": cur.String()}}})
	return err
}

// idlePoll is the longest wait between two reads of an idle session's log:
// ten times PollEvery, at most a second (never less than PollEvery).
func (h *Hub) idlePoll() time.Duration {
	return max(h.PollEvery, min(10*h.PollEvery, time.Second))
}
