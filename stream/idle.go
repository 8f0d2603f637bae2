package stream

import (
	"context"
	"time"

	"github.com/coachd/coachd"
)

// Idle followers (issue 18: 10,000 idle streams on one process) cost no
// query and no goroutine of their own. A follower whose session has no
// turn running, here or in the log, parks: a turn beginning here wakes
// the session's parked followers at once (Begin), and one goroutine per
// hub looks at the log for turns begun on other replicas, once per
// parked session (not per follower), backing off from PollEvery to
// idlePoll while nothing happens.

// An Idle is where a follower stopped because its session was idle: the
// last event it was sent, and the session's latest turn then (ended, or
// 0 for none).
type Idle struct {
	After  coachd.EventID
	latest int64
}

// parked is one follower waiting in Park.
type parked struct {
	seen  int64 // Idle.latest
	wake  func()
	stop  func() bool // releases the context.AfterFunc
	woken bool        // under Hub.mu
}

// idleSession is a session with parked followers, and when the poller
// looks at its log next.
type idleSession struct {
	user      string
	followers map[*parked]struct{}
	every     time.Duration
	next      time.Time
}

func idleKey(userID, sessionID string) string { return userID + "\x00" + sessionID }

// FollowUntilIdle is FollowBuffered for a follower of a whole session
// that wants its goroutine back while the session is idle: it returns a
// nil error and where it stopped once every event is sent and flushed
// and no turn runs, here or in the log. Park it there, and follow again
// from Idle.After when it wakes. Any other ending is FollowBuffered's
// (ctx done, send failed, ErrShutdown after the shutdown notice).
func (h *Hub) FollowUntilIdle(ctx context.Context, userID, sessionID string, after coachd.EventID, send func(coachd.Event) error, flush func() error) (at Idle, err error) {
	defer func() {
		if ferr := flush(); err == nil {
			err = ferr
		}
	}()
	idle, err := h.follow(ctx, userID, sessionID, after, 0, send, flush)
	if err != nil {
		return Idle{}, err
	}
	if idle == nil { // cannot happen without a followed turn
		return Idle{After: after}, nil
	}
	return *idle, nil
}

// Park waits, holding no goroutine, until the session of an idle follower
// may have something new: a turn begins here, the log shows a turn the
// follower has not seen (begun on another replica), ctx is done, or the
// hub shuts down. Then wake is called once, on its own goroutine.
func (h *Hub) Park(ctx context.Context, userID, sessionID string, at Idle, wake func()) {
	p := &parked{seen: at.latest, wake: wake}
	p.stop = context.AfterFunc(ctx, func() { h.unpark(userID, sessionID, p) })
	key := idleKey(userID, sessionID)
	h.mu.Lock()
	if p.woken {
		h.mu.Unlock()
		return
	}
	if h.down || h.live[sessionID] != nil {
		p.woken = true
		h.mu.Unlock()
		p.stop()
		go wake()
		return
	}
	is := h.idle[key]
	if is == nil {
		is = &idleSession{user: userID, followers: map[*parked]struct{}{}, every: h.PollEvery}
		is.next = time.Now().Add(is.every)
		h.idle[key] = is
	}
	is.followers[p] = struct{}{}
	if !h.polling {
		h.polling = true
		go h.pollIdle()
	}
	h.mu.Unlock()
}

// unpark wakes one parked follower (its context is done).
func (h *Hub) unpark(userID, sessionID string, p *parked) {
	key := idleKey(userID, sessionID)
	h.mu.Lock()
	if p.woken {
		h.mu.Unlock()
		return
	}
	p.woken = true
	if is := h.idle[key]; is != nil {
		delete(is.followers, p)
		if len(is.followers) == 0 {
			delete(h.idle, key)
		}
	}
	h.mu.Unlock()
	go p.wake()
}

// wakeLocked takes the followers of is for which pick says so out of the
// hub and returns them; the caller holds h.mu and calls wakeAll after.
func (h *Hub) wakeLocked(key string, is *idleSession, pick func(*parked) bool, out []*parked) []*parked {
	for p := range is.followers {
		if pick == nil || pick(p) {
			p.woken = true
			delete(is.followers, p)
			out = append(out, p)
		}
	}
	if len(is.followers) == 0 {
		delete(h.idle, key)
	}
	return out
}

func wakeAll(ps []*parked) {
	for _, p := range ps {
		p.stop()
		go p.wake()
	}
}

// wakeSessionLocked takes the user's parked followers of the session
// out of the hub (a turn of theirs begins). Callers hold h.mu.
func (h *Hub) wakeSessionLocked(userID, sessionID string) []*parked {
	key := idleKey(userID, sessionID)
	if is := h.idle[key]; is != nil {
		return h.wakeLocked(key, is, nil, nil)
	}
	return nil
}

// Parked returns how many followers are parked (for tests and metrics).
func (h *Hub) Parked() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, is := range h.idle {
		n += len(is.followers)
	}
	return n
}

// pollIdle looks at the log of each session with parked followers when
// it is due, one session at a time, and wakes the followers a turn they
// have not seen concerns. It returns once nobody is parked.
func (h *Hub) pollIdle() {
	tick := time.NewTicker(h.PollEvery)
	defer tick.Stop()
	type due struct {
		key, user, session string
	}
	var todo []due
	var lastErrLogged time.Time
	for now := range tick.C {
		todo = todo[:0]
		h.mu.Lock()
		if len(h.idle) == 0 || h.down {
			h.polling = false
			h.mu.Unlock()
			return
		}
		for key, is := range h.idle {
			if !now.Before(is.next) {
				todo = append(todo, due{key: key, user: is.user, session: key[len(is.user)+1:]})
			}
		}
		h.mu.Unlock()
		for _, d := range todo {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			tl, err := h.store.LatestTurn(ctx, d.user, d.session)
			cancel()
			// A look the database failed (a restart, a failover) leaves
			// them parked, looked at again later: woken, their own read
			// failed too and ended every idle stream at once, with no
			// event. Any other failed look wakes them all: their read
			// ends their stream with the error (a session gone).
			code := coachd.ErrorCode(err)
			down := code == coachd.EINTERNAL || code == coachd.EUNAVAILABLE
			if down && time.Since(lastErrLogged) > time.Minute {
				lastErrLogged = time.Now()
				h.logger.Warn("looking at an idle session's log failed; its followers stay parked", "session", d.session, "err", err)
			}
			var woken []*parked
			h.mu.Lock()
			if is := h.idle[d.key]; is != nil {
				woken = h.wakeLocked(d.key, is, func(p *parked) bool {
					return err != nil && !down || err == nil && (tl.Turn != p.seen || (tl.Turn > 0 && !tl.Ended))
				}, nil)
				is.every = min(is.every*2, h.idlePoll())
				is.next = time.Now().Add(is.every)
			}
			h.mu.Unlock()
			wakeAll(woken)
		}
	}
}
