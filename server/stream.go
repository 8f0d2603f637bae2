package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/internal/stack"
	"github.com/coachd/coachd/sse"
	"github.com/coachd/coachd/stream"
)

// StreamTokenTTL is how long a stream token lets an EventSource client
// (re)connect to its session's stream.
const StreamTokenTTL = 10 * time.Minute

// retryHint is the reconnection delay sent to EventSource clients.
const retryHint = 2 * time.Second

var errClientGone = errors.New("server: the client left and the turn follows it (on_disconnect: cancel)")

// Drain ends every open stream with a retryable server_shutdown error
// carrying its last event id, and stops the turns still running here
// (stored and settled as if their client had left). The serve command
// calls it when the shutdown grace runs out.
func (s *Server) Drain() {
	s.draining.Store(true)
	s.hub.Shutdown()
}

// WaitTurns waits until no turn runs in this process (turns may outlive
// their request) and every session stream parked off its request has
// ended (they end on Drain), or ctx is done.
func (s *Server) WaitTurns(ctx context.Context) error {
	if err := s.hub.Wait(ctx); err != nil {
		return err
	}
	return s.detached.wait(ctx)
}

// onDisconnect is the request's ?on_disconnect=: "" when it has none.
func onDisconnect(r *http.Request) (string, error) {
	switch v := r.URL.Query().Get("on_disconnect"); v {
	case "", agent.OnDisconnectContinue, agent.OnDisconnectCancel:
		return v, nil
	}
	return "", coachd.Invalid(coachd.FieldError{Field: "on_disconnect", Message: "must be continue or cancel", Code: "enum"})
}

// disconnectPolicy is what the client leaving does to the turn: what the
// request asked, else the agent's, else continue in the coachd dialect and
// cancel in the seeds' (their documents stop the loop when the client
// goes).
func disconnectPolicy(asked, dialect string, a *agent.Agent) string {
	switch {
	case asked != "":
		return asked
	case a != nil && a.OnDisconnect != "":
		return a.OnDisconnect
	case dialect == sse.Coachd:
		return agent.OnDisconnectContinue
	}
	return agent.OnDisconnectCancel
}

// runLive runs a prepared turn in its own goroutine, logging its events,
// and returns the Live readers follow and a channel closed when the turn
// is over (stored, settled, its session released). The turn stops with
// ctx, with Hub.Stop or on Drain.
func (s *Server) runLive(ctx context.Context, t *agent.Turn) (*stream.Live, <-chan struct{}, context.CancelCauseFunc, error) {
	live, ctx, cancel, err := s.beginLive(ctx, t)
	if err != nil {
		return nil, nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		stack.Grow() // the turn decodes its model's stream and writes to the store
		defer close(done)
		defer cancel(nil)
		defer live.Finish()
		defer func() {
			// The turn runs outside the handler: its panic is ours to
			// catch (Run has stored its history and settled by now).
			if p := recover(); p != nil {
				s.logger.Error("turn panicked", "session", t.SessionID(), "panic", p)
			}
		}()
		t.Run(ctx, live)
	}()
	return live, done, cancel, nil
}

// beginLive starts logging a prepared turn and returns its Live and the
// context to run it in, which Hub.Stop, a stop asked through the log and
// Drain cancel. A failure gives the turn up.
func (s *Server) beginLive(ctx context.Context, t *agent.Turn) (*stream.Live, context.Context, context.CancelCauseFunc, error) {
	var live *stream.Live
	if n := t.StreamTurn(); n > 0 { // begun with the turn's admission
		live = s.hub.BeginAt(UserFrom(ctx).ID, t.SessionID(), n)
		live.Stored(t.Admitted)
	} else {
		var err error
		if live, err = s.hub.Begin(ctx, UserFrom(ctx).ID, t.SessionID()); err != nil {
			t.Close()
			return nil, nil, nil, err
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	live.SetCancel(cancel)
	return live, ctx, cancel, nil
}

// teeSink sends events to the log and to a second sink.
type teeSink struct{ a, b coachd.EventSink }

func (t teeSink) Send(ev coachd.Event) error {
	t.a.Send(ev)
	return t.b.Send(ev)
}

// handleChatStream runs a turn and streams it as SSE in the dialect chosen
// by ?protocol= (coachd, asp or sage). Each event carries its id
// (turn:seq); a client that loses the stream re-attaches with
// GET /v1/sessions/{id}/stream and Last-Event-ID.
func (s *Server) handleChatStream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dialect := streamDialect(r)
		if p := r.URL.Query().Get("protocol"); p != "" && p != dialect {
			s.StreamError(w, r, sse.Coachd, coachd.Invalid(coachd.FieldError{Field: "protocol", Message: "must be coachd, asp, sage or ai-sdk", Code: "enum"}))
			return
		}
		// A bad on_disconnect is refused before the turn is admitted
		// (which stores its message).
		asked, err := onDisconnect(r)
		if err != nil {
			s.StreamError(w, r, dialect, err)
			return
		}
		// A message sent again with its Idempotency-Key follows the turn
		// it was admitted as (resend.go); without the header nothing is
		// read here. The ai-sdk dialect's chat id is its own key.
		var ck *resendKey
		if dialect != sse.AISDK {
			if r, ck, err = withChatKey(r); err != nil {
				s.StreamError(w, r, dialect, err)
				return
			}
			if ck != nil && s.followKeyed(w, r, dialect, ck) {
				return
			}
		}
		var t *agent.Turn
		if dialect == sse.AISDK {
			if err = s.checkLimits(r); err == nil {
				t, err = s.prepareUIChatTurn(r)
			}
		} else {
			t, err = s.prepareLimitedTurn(r)
		}
		if ck != nil && (errors.Is(err, coachd.ErrTurnKeyTaken) || coachd.ErrorCode(err) == coachd.ETURNINPROGRESS) &&
			s.followKeyed(w, r, dialect, ck) {
			return // the same request, admitted meanwhile
		}
		if errors.Is(err, coachd.ErrTurnKeyTaken) {
			// Admitted by a request whose commit is not seen yet.
			err = errKeyStarting
		}
		if err != nil {
			s.StreamError(w, r, dialect, err)
			return
		}
		policy := disconnectPolicy(asked, dialect, t.Agent())
		ctx := r.Context()
		if policy == agent.OnDisconnectContinue {
			ctx = context.WithoutCancel(ctx)
		}
		live, done, cancel, err := s.runLive(ctx, t)
		if err != nil {
			s.StreamError(w, r, dialect, err)
			return
		}
		// The turn's model request left with its admission's commit
		// behind it (TurnRequest.Behind); the client hears nothing of
		// the turn before that is stored, and an admission that failed
		// is answered as it was before the request.
		if err := t.Admitted(); err != nil {
			cancel(err)
			<-done
			s.StreamError(w, r, dialect, err)
			return
		}
		sid := t.SessionID()
		w.Header().Set("X-Coachd-Session-Id", sid)
		w.Header().Set("X-Coachd-Turn", strconv.FormatInt(live.Turn(), 10))
		s.observer.StreamOpened()
		defer s.observer.StreamClosed()
		sw := sse.NewWriter(w, r, dialect, s.heartbeat)
		sw.SetWriteTimeout(s.writeTime)
		// The turn's last events stay queued once its end is among them:
		// End sends them with the response's end, in one write.
		ending := false
		queue := func(ev coachd.Event) error {
			ending = ending || ev.Terminal()
			return sw.Queue(ev)
		}
		flush := func() error {
			if ending {
				return nil
			}
			return sw.Flush()
		}
		err = s.hub.FollowBuffered(r.Context(), UserFrom(r.Context()).ID, sid, coachd.EventID{}, live.Turn(), queue, flush)
		switch {
		case err == nil:
			// The client read the turn to its end: answer once the turn
			// is done (its session released, so its next request finds it
			// free; its events logged).
			<-done
			sw.End()
			return
		case policy == agent.OnDisconnectCancel:
			cancel(errClientGone)
			<-done
		}
		sw.Close()
	})
}

// handleSessionStream is GET /v1/sessions/{id}/stream: it follows the
// session's turns as SSE in any dialect, for EventSource clients too.
// With Last-Event-ID (or ?last_event_id=) it replays what came after that
// event and goes on live; without, it starts at the running turn's
// beginning, or waits for the next turn. Authentication is the usual
// header, or ?token= minted by POST /v1/sessions/{id}/stream-token.
func (s *Server) handleSessionStream() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dialect := streamDialect(r)
		q := r.URL.Query()
		fail := s.StreamError
		if byEventSource(r, dialect) {
			fail = s.eventSourceError
		}
		if p := q.Get("protocol"); p != "" && p != dialect {
			fail(w, r, sse.Coachd, coachd.Invalid(coachd.FieldError{Field: "protocol", Message: "must be coachd, asp, sage or ai-sdk", Code: "enum"}))
			return
		}
		if err := noBody(r); err != nil {
			fail(w, r, dialect, err)
			return
		}
		// Before authentication, since a stream token is checked against
		// the id: a malformed one is the uniform 404 and never reaches SQL.
		id, err := pathID(r, coachd.PrefixSession, "session")
		if err != nil {
			fail(w, r, dialect, err)
			return
		}
		var u *coachd.User
		tok := q.Get("token")
		byToken := tok != "" && r.Header.Get("Authorization") == ""
		if byToken {
			u, err = s.store.StreamTokenUser(r.Context(), hashStreamToken(tok), id)
		} else {
			u, err = s.Authenticate(r)
		}
		if err != nil {
			fail(w, r, dialect, err)
			return
		}
		last := r.Header.Get("Last-Event-ID")
		if last == "" {
			last = q.Get("last_event_id")
		}
		after, err := coachd.ParseEventID(last)
		if err != nil {
			fail(w, r, dialect, err)
			return
		}
		tl, err := s.store.LatestTurn(r.Context(), u.ID, id)
		if err != nil {
			fail(w, r, dialect, orNotFound(err, "session"))
			return
		}
		switch {
		case last == "":
			after = coachd.EventID{Turn: tl.Turn, Seq: math.MaxInt64}
			if !tl.Ended && tl.Turn > 0 {
				after.Seq = 0
			}
		case after.Turn > tl.Turn:
			// Never sent on this session (forged, or another session's):
			// followed, it would skip every turn to come, silently.
			fail(w, r, dialect, coachd.Invalid(coachd.FieldError{Field: "last_event_id",
				Message: fmt.Sprintf("is past this session's events (its latest turn is %d): reconnect without it", tl.Turn), Code: "range"}))
			return
		}
		var missed *coachd.Event
		if last != "" {
			if missed, err = s.eventsMissed(r.Context(), u.ID, id, after, tl); err != nil {
				fail(w, r, dialect, err)
				return
			}
		}
		release, err := s.streams.acquire(u.ID)
		if err != nil {
			fail(w, r, dialect, err)
			return
		}
		w.Header().Set("X-Coachd-Session-Id", id)
		if missed != nil {
			w.Header().Set("X-Coachd-Events-Missed", after.String())
		}
		s.observer.StreamOpened()
		closed := func() { s.observer.StreamClosed(); release() }
		parked := false
		defer func() {
			if !parked { // a parked stream closes itself when it ends
				closed()
			}
		}()
		sw := sse.NewWriter(w, r, dialect, s.heartbeat)
		sw.SetWriteTimeout(s.writeTime)
		// The turns logged by now were authorised just now.
		send := whileAuthorized(s.streamAuth(r, u, byToken), tl.Turn, sw.Queue)
		if sw.Retry(retryHint) == nil {
			if missed != nil {
				sw.Queue(*missed) // goes out with the first events, or before their wait
			}
			if detachable(r) {
				// Idle: the stream is parked off this request (detach.go),
				// which ends here; it closes itself.
				at, err := s.hub.FollowUntilIdle(r.Context(), u.ID, id, after, send, sw.Flush)
				if err == nil && s.detach(w, sw, send, u.ID, id, at, closed) {
					parked = true
					return
				}
				if err == nil {
					s.hub.FollowBuffered(r.Context(), u.ID, id, at.After, 0, send, sw.Flush)
				}
			} else {
				s.hub.FollowBuffered(r.Context(), u.ID, id, after, 0, send, sw.Flush)
			}
		}
		sw.Close()
	})
}

// byEventSource reports whether r is an EventSource following a session
// with its stream token (stream_url): no Authorization header, the token
// in the URL, and the Accept: text/event-stream every EventSource sends.
// It cannot read a refusal's status, so it is refused in a 200 stream
// (eventSourceError); a client with a key reads statuses and keeps them,
// as does the ai-sdk dialect's (useChat reads a refusal's body as text).
func byEventSource(r *http.Request, dialect string) bool {
	return r.URL.Query().Get("token") != "" && r.Header.Get("Authorization") == "" &&
		strings.Contains(r.Header.Get("Accept"), "text/event-stream") && dialect != sse.AISDK
}

// eventsMissed is the notice that opens a session stream resumed after
// an id whose following events the log may have lost (pruning by age or
// by the turns kept deletes the oldest turns whole), or nil. Which of the
// turn's events the client had is not known once the turn is gone, so
// its turn being gone is enough; from 0:0, turn 1 being gone.
func (s *Server) eventsMissed(ctx context.Context, userID, sessionID string, after coachd.EventID, latest coachd.TurnLog) (*coachd.Event, error) {
	turn := max(after.Turn, 1)
	if turn > latest.Turn {
		return nil, nil
	}
	tl, err := s.store.TurnLogAt(ctx, userID, sessionID, turn)
	if err != nil || tl.Turn != 0 {
		return nil, err
	}
	data, err := json.Marshal(map[string]string{
		"last_event_id": after.String(),
		"message": "the event log no longer has some events after last_event_id; reload GET /v1/sessions/" +
			sessionID + "/messages for what was missed",
	})
	if err != nil {
		return nil, err
	}
	return &coachd.Event{Type: coachd.EventEventsMissed, SessionID: sessionID, Data: data}, nil
}

// handleStreamToken is POST /v1/sessions/{id}/stream-token.
func (s *Server) handleStreamToken() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := UserFrom(r.Context())
		id, err := pathID(r, coachd.PrefixSession, "session")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		tok := "st_" + NewAPIKey()[len(APIKeyPrefix):]
		expires := s.clock.Now().Add(StreamTokenTTL).UTC().Truncate(time.Second)
		if err := s.store.CreateStreamToken(r.Context(), u.ID, id, hashStreamToken(tok), expires); err != nil {
			s.Error(w, r, orNotFound(err, "session"))
			return
		}
		s.encode(w, r, http.StatusCreated, map[string]any{
			"token": tok, "expires_at": expires,
			"stream_url": "/v1/sessions/" + id + "/stream?token=" + tok,
		})
	})
}

func hashStreamToken(tok string) string {
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

// handleSessionStop is POST /v1/sessions/{id}/stop: it stops the session's
// running turn, wherever it runs; the turn ends as aborted, stored and
// settled like a client leaving with on_disconnect: cancel.
func (s *Server) handleSessionStop() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := UserFrom(r.Context())
		id, err := pathID(r, coachd.PrefixSession, "session")
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if err := s.hub.Stop(r.Context(), u.ID, id); err != nil {
			if !errors.Is(err, coachd.ErrNoTurnRunning) { // the session is the user's
				err = orNotFound(err, "session")
			}
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusAccepted, map[string]any{"session_id": id, "stopping": true})
	})
}
