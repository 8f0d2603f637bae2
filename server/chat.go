package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/sse"
	"github.com/coachd/coachd/stream"
)

// chatRequest is the body of POST /v1/chat/stream and POST /v1/chat.
type chatRequest struct {
	Message    string        `json:"message"`
	SessionID  string        `json:"session_id"`
	Agent      string        `json:"agent"`
	ToolResult *agent.Answer `json:"tool_result"`
	// Retry re-runs the session's last turn that failed before a reply,
	// or in one: a reply that broke off is left out (RetryPartial).
	Retry bool `json:"retry"`
	// Attachments are images and documents for the model (attach.go).
	Attachments []attachmentRequest `json:"attachments"`
	// ReplayID is the replay seed 000's page shows beside the chat: the
	// model is told it with the turn's context, so it can look it up.
	ReplayID string `json:"replay_id"`
}

func (req chatRequest) Valid(context.Context) []coachd.FieldError {
	if len(req.Agent) > 100 {
		return []coachd.FieldError{{Field: "agent", Message: "must be at most 100 characters", Code: "length"}}
	}
	if len(req.ReplayID) > 200 {
		return []coachd.FieldError{{Field: "replay_id", Message: "must be at most 200 characters", Code: "length"}}
	}
	if errs := validAttachments(req.Attachments); len(errs) > 0 {
		return errs
	}
	t := req.turn(nil, false)
	// Stand-ins for the attachments: Valid counts them, prepareTurn
	// builds them.
	t.Attachments = make([]coachd.Block, len(req.Attachments))
	return t.Valid()
}

func (req chatRequest) turn(u *coachd.User, wait bool) agent.TurnRequest {
	return agent.TurnRequest{
		User: u, SessionID: req.SessionID, Agent: req.Agent,
		Message: req.Message, Answer: req.ToolResult, Wait: wait, Retry: req.Retry, RetryPartial: req.Retry,
		// Seeds 000 and 002 send a message again after an error.
		Resent:  true,
		Context: replayContext(req.ReplayID),
	}
}

// replayContext tells the model which replay the player is looking at
// (seed 000's replay_id), or is empty.
func replayContext(id string) string {
	if id == "" {
		return ""
	}
	b, _ := json.Marshal(id)
	return "[The player's client shows the replay with replay_id " + string(b) + ".]"
}

// prepareTurn decodes a chat request and prepares its turn; every error
// here is an HTTP error, before any byte of the stream.
func (s *Server) prepareTurn(r *http.Request) (*agent.Turn, error) {
	tr, err := s.chatTurn(r)
	if err != nil {
		return nil, err
	}
	return s.prepare(r, tr)
}

// prepare prepares a decoded chat turn. A message sent again while its
// own turn still runs (agent.Runner.ResendsRunning) stops that turn, whose
// client lost its stream, and runs the message again once it ended.
func (s *Server) prepare(r *http.Request, tr agent.TurnRequest) (*agent.Turn, error) {
	ctx := r.Context()
	// A message with its Idempotency-Key is kept under it; sent again, it
	// follows its turn (followKeyed) and never stops it.
	ck := chatKeyFrom(ctx)
	if ck != nil && tr.Stream != nil {
		tr.Stream.Key, tr.Stream.Hash = ck.key, ck.hash
		if k := ck.released; k != nil {
			// A new attempt of the released turn: its message, stored,
			// runs again in its session (Resent), the key moved to it.
			tr.Stream.Replaces = k.Turn
			if tr.SessionID == "" {
				tr.SessionID = k.SessionID
			}
		}
	}
	t, err := s.runner.Prepare(ctx, tr)
	if coachd.ErrorCode(err) == coachd.ETURNINPROGRESS && ck == nil && s.runner.ResendsRunning(ctx, tr) {
		// Not found: the turn ended meanwhile, and the session is free.
		if serr := s.hub.Stop(ctx, tr.User.ID, tr.SessionID); serr == nil || coachd.ErrorCode(serr) == coachd.ENOTFOUND {
			tr.Wait = true
			t, err = s.runner.Prepare(ctx, tr)
		}
	}
	if err != nil {
		return nil, orNotFound(err, "session")
	}
	return t, nil
}

// chatTurn decodes a chat request into its turn.
func (s *Server) chatTurn(r *http.Request) (agent.TurnRequest, error) {
	if s.runner == nil {
		return agent.TurnRequest{}, coachd.Errorf(coachd.EAPI, "this server has no model configured")
	}
	q := newQuery(r)
	wait := false
	switch v := q.v.Get("on_busy"); v {
	case "", "reject":
	case "wait":
		wait = true
	default:
		q.fail("on_busy", "must be reject or wait", "enum")
	}
	if err := q.err(); err != nil {
		return agent.TurnRequest{}, err
	}
	req, err := decode[chatRequest](r)
	if err != nil {
		return agent.TurnRequest{}, err
	}
	u := UserFrom(r.Context())
	tr := req.turn(u, wait)
	tr.Stream = s.hub.Start() // its callers log it (beginLive)
	// Its callers answer once the admission is stored: the stream waits
	// for it (Turn.Admitted), the JSON answer for the turn's end.
	tr.Behind = true
	if len(req.Attachments) > 0 {
		if tr.Attachments, err = s.attachmentBlocks(r.Context(), u.ID, req.Attachments); err != nil {
			return agent.TurnRequest{}, err
		}
	}
	return tr, nil
}

// streamDialect is the dialect ?protocol= asks for; coachd when it names
// none (or none known: that is answered as an error, in coachd's dialect).
func streamDialect(r *http.Request) string {
	if d := r.URL.Query().Get("protocol"); sse.ValidDialect(d) {
		return d
	}
	return sse.Coachd
}

// handleChat runs a turn and answers with one JSON document.
func (s *Server) handleChat() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A message sent again with its Idempotency-Key is answered
		// with the turn it was admitted as (resend.go), as on the
		// stream; without the header nothing is read here.
		r, ck, err := withChatKey(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		if ck != nil && s.answerKeyed(w, r, ck) {
			return
		}
		t, err := s.prepareLimitedTurn(r)
		if ck != nil && (errors.Is(err, coachd.ErrTurnKeyTaken) || coachd.ErrorCode(err) == coachd.ETURNINPROGRESS) &&
			s.answerKeyed(w, r, ck) {
			return // the same request, admitted meanwhile
		}
		if errors.Is(err, coachd.ErrTurnKeyTaken) {
			err = errKeyStarting
		}
		if err != nil {
			s.Error(w, r, err)
			return
		}
		ctx := r.Context()
		if ck != nil {
			// Its client comes back with the key for the turn's result
			// (answerKeyed): the turn goes on without it, as a stream's
			// does (on_disconnect: continue), instead of ending aborted.
			ctx = context.WithoutCancel(ctx)
		}
		live, ctx, cancel, err := s.beginLive(ctx, t)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		defer live.Finish()
		defer cancel(nil)
		c := &collector{}
		res := t.Run(ctx, teeSink{live, c})
		s.answerChat(w, r, res, c.interaction, s.drainCut(res.StopReason) != nil)
	})
}

// answerChat answers POST /v1/chat with a turn's result; drained says
// the server's drain stopped the turn.
func (s *Server) answerChat(w http.ResponseWriter, r *http.Request, res *agent.Result, in *interaction, drained bool) {
	if res.Err != nil && res.Text == "" && len(res.ToolCalls) == 0 {
		s.Error(w, r, res.Err)
		return
	}
	out := chatResponse{Result: res, Interaction: in}
	if res.Err != nil {
		out.Error = &errorObject{Code: res.Err.Code, Message: res.Err.Message, Details: res.Err.Details}
	} else if drained {
		// Not a user's stop: the reply is cut short by a restart.
		out.Error = &errorObject{Code: stream.CodeShutdown, Message: "the server is restarting: the reply was cut short (stored, marked partial)"}
	}
	w.Header().Set("X-Coachd-Session-Id", res.SessionID)
	s.encode(w, r, http.StatusOK, out)
}

type chatResponse struct {
	*agent.Result
	Interaction *interaction `json:"interaction,omitempty"`
	Error       *errorObject `json:"error,omitempty"`
}

type interaction struct {
	ToolUseID string          `json:"tool_use_id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	// Approval marks a call waiting for the user's approval; Reason says why.
	Approval bool   `json:"approval,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// ExpiresAt is when the call stops taking an answer, as stored.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// collector is the event sink of a non-streaming turn.
type collector struct {
	mu          sync.Mutex
	interaction *interaction
}

func (c *collector) Send(ev coachd.Event) error {
	if ev.Type == coachd.EventInteractionRequested || ev.Type == coachd.EventApprovalRequired {
		c.mu.Lock()
		c.interaction = &interaction{ToolUseID: ev.ToolUseID, Name: ev.ToolName, Input: ev.Input,
			Approval: ev.Type == coachd.EventApprovalRequired, Reason: ev.Reason, ExpiresAt: ev.ExpiresAt}
		c.mu.Unlock()
	}
	return nil
}

// eventSourceRetry is how long an EventSource told it cannot start a turn
// waits before it reopens the stream (it reopens every stream that ends).
const eventSourceRetry = time.Hour

// handleChatStreamGet answers an EventSource opened on the stream endpoint,
// as seed 004's client does (`new EventSource('/chat/stream', …)`): it can
// only GET, so it cannot send a message, and a status other than 200
// reaches its error listener with no data (the seed's JSON.parse(e.data)
// throws, and the user is shown nothing). It gets a 200 stream whose one
// error event says why (its key refused, or how a turn is started and a
// session followed). Anyone else gets the 405 a GET would.
func (s *Server) handleChatStreamGet() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") || streamDialect(r) == sse.AISDK {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, &coachd.Error{Code: coachd.EINVALID,
				Message: "method " + r.Method + " not allowed on " + r.URL.Path + "; allowed: POST"})
			return
		}
		_, err := s.Authenticate(r)
		if err == nil {
			err = coachd.Errorf(coachd.EINVALID, "an EventSource cannot start a turn: POST /v1/chat/stream with {\"message\", \"session_id\"}, "+
				"or follow a session with GET /v1/sessions/{id}/stream")
		}
		s.eventSourceError(w, r, streamDialect(r), err)
	})
}

// eventSourceError answers an EventSource's request with err as a 200
// stream of one error event, after a retry: of an hour. An EventSource
// hands a status other than 200 to its error listener with no data (and
// never reconnects), so the event is the only way it learns why; the
// hint keeps it from reopening the stream every few seconds. The
// database unavailable for now is the exception: the hint is the usual
// one (at least the error's Retry-After), for the stream to come back
// once the database does, not an hour later.
func (s *Server) eventSourceError(w http.ResponseWriter, r *http.Request, dialect string, err error) {
	e, _ := s.answer(w, r, err)
	sw := sse.NewWriter(w, r, dialect, -1)
	sw.SetWriteTimeout(s.writeTime)
	if e.Code == coachd.EUNAVAILABLE {
		sw.Retry(max(retryHint, e.RetryAfter))
	} else {
		sw.Retry(eventSourceRetry)
	}
	sw.Send(coachd.Event{Type: coachd.EventError, Err: e})
	sw.Close()
}
