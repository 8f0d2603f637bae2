package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/sse"
)

// resendKey is a chat request's Idempotency-Key and its body's hash: the
// same key with the same body again is the same request, sent again by a
// client that lost its answer.
type resendKey struct {
	key, hash string
	// released is the key's turn when it ended failing with a retryable
	// error (keyedTurn): the request runs again, as a retry of that
	// turn's message in its session (prepare).
	released *coachd.TurnKey
}

type chatKeyContext struct{}

// chatKeyFrom is the key handleChatStream put in ctx, nil without one.
func chatKeyFrom(ctx context.Context) *resendKey {
	k, _ := ctx.Value(chatKeyContext{}).(*resendKey)
	return k
}

// withChatKey reads the request's Idempotency-Key and, with one, its
// body (decoded afterwards as usual) to hash it, and returns the request
// carrying the key for its turn's admission (prepare). Without the header
// it reads nothing: the request is as it came.
func withChatKey(r *http.Request) (*http.Request, *resendKey, error) {
	key, err := idempotencyKey(r)
	if err != nil || key == "" {
		return r, nil, err
	}
	b, rerr := io.ReadAll(r.Body)
	// decode reads the body again, and an error reading it (too large,
	// too slow) too, as it would have.
	r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b), errReader{rerr}))
	if rerr != nil {
		return r, nil, nil
	}
	// The same JSON however it is spaced; a body that is none is
	// refused by decode, as without the key.
	var c bytes.Buffer
	if json.Compact(&c, b) != nil {
		return r, nil, nil
	}
	// Hashed as the stream's whichever door it came through: the same
	// message resent through the other door is the same request.
	k := &resendKey{key: key, hash: requestHash(chatKeyPath, json.RawMessage(c.Bytes()))}
	return r.WithContext(context.WithValue(r.Context(), chatKeyContext{}, k)), k, nil
}

// errKeyStarting answers a keyed chat request whose key was taken by an
// admission whose commit is not seen yet (the same request, twice at once).
var errKeyStarting = &coachd.Error{Code: coachd.ETURNINPROGRESS, Retryable: true,
	Message: "this message (its Idempotency-Key) is being started by another request: send it again"}

// chatKeyPath is the path a chat request's key is hashed with, on both
// doors (POST /v1/chat/stream and POST /v1/chat).
const chatKeyPath = "/v1/chat/stream"

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err == nil {
		return 0, io.EOF
	}
	return 0, e.err
}

// followKeyed answers a chat request whose key names a turn already, as
// long as the event log keeps that turn: with the turn's events (after
// Last-Event-ID when sent, which must be one of them), finished or still
// running, instead of a new turn. It reports whether it answered (an
// error too); false when the key names no turn (yet).
func (s *Server) followKeyed(w http.ResponseWriter, r *http.Request, dialect string, ck *resendKey) bool {
	u := UserFrom(r.Context())
	k, found, err := s.keyedTurn(r.Context(), u.ID, ck)
	if !found {
		return false
	}
	after := coachd.EventID{Turn: k.Turn}
	if last := r.Header.Get("Last-Event-ID"); err == nil && last != "" {
		if after, err = coachd.ParseEventID(last); err == nil && after.Turn != k.Turn {
			err = coachd.Invalid(coachd.FieldError{Field: "last_event_id",
				Message: fmt.Sprintf("is not an event of this request's turn (%d): send it again without Last-Event-ID", k.Turn), Code: "range"})
		}
	}
	var release func()
	if err == nil {
		release, err = s.replaySlot(r.Context(), u.ID, k)
	}
	if err != nil {
		s.StreamError(w, r, dialect, err)
		return true
	}
	defer release()
	w.Header().Set("X-Coachd-Session-Id", k.SessionID)
	w.Header().Set("X-Coachd-Turn", strconv.FormatInt(k.Turn, 10))
	w.Header().Set("Idempotent-Replayed", "true")
	s.observer.StreamOpened()
	defer s.observer.StreamClosed()
	sw := sse.NewWriter(w, r, dialect, s.heartbeat)
	sw.SetWriteTimeout(s.writeTime)
	if s.hub.FollowBuffered(r.Context(), u.ID, k.SessionID, after, k.Turn, sw.Queue, sw.Flush) == nil {
		sw.End()
		return true
	}
	sw.Close()
	return true
}

// keyedTurn is the user's turn ck names: found is false when it names
// none (yet), or one that failed with a retryable error (ck.released);
// a turn of another request (body) is ECONFLICT. Asked again after the
// new attempt's admission was refused (the key moved meanwhile, or the
// message could not run again without being stored twice), it answers
// the turn the key names, the released one too.
func (s *Server) keyedTurn(ctx context.Context, userID string, ck *resendKey) (k coachd.TurnKey, found bool, err error) {
	k, err = s.store.FindTurnKey(ctx, userID, ck.key)
	if coachd.ErrorCode(err) == coachd.ENOTFOUND {
		return k, false, nil
	}
	if err == nil && k.Hash != ck.hash {
		err = &coachd.Error{Code: coachd.ECONFLICT, Message: "Idempotency-Key was already used for a different request",
			Details: []coachd.FieldError{{Field: "Idempotency-Key", Message: "was sent with another body: send a new message with a new key", Code: "reused"}}}
	}
	if err == nil && ck.released == nil && s.retryable(ctx, userID, k) {
		ck.released = &k
		return k, false, nil
	}
	return k, true, err
}

// retryable reports whether the key's turn ended failing with a
// retryable error (the model busy, Retry-After): its key is released for
// a new attempt, as an idempotency key is after a failure the client is
// told to retry, instead of answering that failure to every retry. A
// success, a turn still running and a failure that is not retryable (a
// refused request, a contract broken) are answered again (replayed).
func (s *Server) retryable(ctx context.Context, userID string, k coachd.TurnKey) bool {
	tl, err := s.store.TurnLogAt(ctx, userID, k.SessionID, k.Turn)
	if err != nil || tl.Turn != k.Turn || !tl.Ended {
		return false
	}
	after := coachd.EventID{Turn: k.Turn}
	var failed *coachd.Error
	for {
		evs, err := s.store.Events(ctx, userID, k.SessionID, after, 500)
		if err != nil {
			return false
		}
		for _, ev := range evs {
			if ev.Turn != k.Turn {
				return failed != nil && failed.Retryable
			}
			if ev.Type == coachd.EventError {
				failed = ev.Err
			}
			after = coachd.EventID{Turn: ev.Turn, Seq: ev.Seq}
		}
		if len(evs) < 500 {
			return failed != nil && failed.Retryable
		}
	}
}

// replaySlot takes one of the user's stream slots for a keyed resend
// that follows its turn while it runs, as a session stream does. A turn
// that ended is answered from the log at once and takes none: its first
// request took none, and a client resending lost answers while its
// session streams are open would be refused "too many open streams" for
// a turn that is over.
func (s *Server) replaySlot(ctx context.Context, userID string, k coachd.TurnKey) (release func(), err error) {
	if tl, err := s.store.TurnLogAt(ctx, userID, k.SessionID, k.Turn); err == nil && tl.Turn == k.Turn && tl.Ended {
		return func() {}, nil
	}
	return s.streams.acquire(userID)
}

// answerKeyed is followKeyed for POST /v1/chat: it answers with the
// turn's result, rebuilt from its logged events once the turn ended
// (waiting for it while it runs), as the turn's own request answered.
func (s *Server) answerKeyed(w http.ResponseWriter, r *http.Request, ck *resendKey) bool {
	u := UserFrom(r.Context())
	k, found, err := s.keyedTurn(r.Context(), u.ID, ck)
	if !found {
		return false
	}
	var release func()
	if err == nil {
		release, err = s.replaySlot(r.Context(), u.ID, k)
	}
	if err != nil {
		s.Error(w, r, err)
		return true
	}
	defer release()
	rb := &loggedResult{res: agent.Result{SessionID: k.SessionID}}
	if err := s.hub.Follow(r.Context(), u.ID, k.SessionID, coachd.EventID{Turn: k.Turn}, k.Turn, rb.Send); err != nil {
		s.Error(w, r, err)
		return true
	}
	res := &rb.res
	if res.StopReason == coachd.TurnEndTurn && s.runner != nil {
		if sess, err := s.store.FindSession(r.Context(), u.ID, k.SessionID); err == nil {
			if ag, ok := s.runner.Agent(sess.Agent); ok {
				res.Output = ag.Contracts.FinalOutput(rb.last.String())
			}
		}
	}
	w.Header().Set("Idempotent-Replayed", "true")
	// Cut by a drain, maybe another process's: answered as it was then.
	s.answerChat(w, r, res, rb.interaction, rb.drained)
	return true
}

// loggedResult rebuilds a turn's agent.Result from its logged events.
type loggedResult struct {
	collector
	res     agent.Result
	last    strings.Builder // the text of the turn's last round
	drained bool            // the server's drain stopped the turn
}

func (l *loggedResult) Send(ev coachd.Event) error {
	l.collector.Send(ev)
	res := &l.res
	switch ev.Type {
	case coachd.EventTurnStarted:
		res.MessageID = ev.MessageID
	case coachd.EventTextDelta:
		res.Text += ev.Text
		l.last.WriteString(ev.Text)
	case coachd.EventRoundBoundary:
		l.last.Reset()
	case coachd.EventToolCallReady:
		res.ToolCalls = append(res.ToolCalls, coachd.ToolCall{ID: ev.ToolUseID, Name: ev.ToolName, Input: ev.Input})
	case coachd.EventToolResult:
		// An approved call runs in the turn that answers its approval,
		// announced in the turn that paused: its result alone, with its
		// input, says it ran (agent.Turn.decide). A denied one
		// did not.
		if ev.Input != nil && !ev.Denied {
			res.ToolCalls = append(res.ToolCalls, coachd.ToolCall{ID: ev.ToolUseID, Name: ev.ToolName, Input: ev.Input})
		}
	case coachd.EventError:
		res.Err = ev.Err
	case coachd.EventTurnEnded:
		res.StopReason, res.LatencyMS, l.drained = ev.StopReason, ev.LatencyMS, ev.Cut
		if u := ev.Usage; u != nil {
			res.Usage, res.Billed = u.Usage, u.Billed
		}
	}
	return nil
}
