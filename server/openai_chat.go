package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/sse"
	"github.com/coachd/coachd/stream"
)

// oaiChunk is one chat.completion.chunk of a stream.
type oaiChunk struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Created int64       `json:"created"`
	Model   string      `json:"model"`
	Choices []oaiChoice `json:"choices"`
	Usage   *oaiUsage   `json:"usage,omitempty"`
}

type oaiChoice struct {
	Index        int             `json:"index"`
	Delta        *oaiDelta       `json:"delta,omitempty"`
	Message      *oaiAnswer      `json:"message,omitempty"`
	FinishReason *string         `json:"finish_reason"`
	Logprobs     json.RawMessage `json:"logprobs"`
}

type oaiDelta struct {
	Role    string `json:"role,omitempty"`
	Content string `json:"content"`
}

type oaiAnswer struct {
	Role    string  `json:"role"`
	Content string  `json:"content"`
	Refusal *string `json:"refusal"`
}

type oaiUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

func finishReason(stop string) *string {
	r := "stop"
	switch stop {
	case coachd.TurnMaxTokens, agent.TurnBudget: // a token limit cut the reply
		r = "length"
	case coachd.TurnRefusal:
		r = "content_filter" // as coachd's openai provider reads it back
	}
	return &r
}

func usageOf(u *coachd.TurnUsage) *oaiUsage {
	if u == nil {
		return &oaiUsage{}
	}
	in := u.InputTokens + u.CacheReadInputTokens + u.CacheCreationInputTokens
	return &oaiUsage{PromptTokens: in, CompletionTokens: u.OutputTokens, TotalTokens: in + u.OutputTokens}
}

// handleChatCompletions is POST /v1/chat/completions, streamed
// (stream: true, SSE chat.completion.chunk data lines, then [DONE]) or
// not (one chat.completion).
func (s *Server) handleChatCompletions() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.runner == nil {
			s.oaiError(w, r, coachd.Errorf(coachd.EAPI, "this server has no model configured"))
			return
		}
		// A caller a limit refused a moment ago is counted, and most
		// likely refused, before its body is read (up to 64 MiB), as
		// /v1/chat/stream does; others once it is.
		counted := s.refused.recent(UserFrom(r.Context()).ID, s.clock.Now())
		if counted {
			if err := s.countApart(r); err != nil {
				s.oaiError(w, r, err)
				return
			}
		}
		var req oaiRequest
		if err := decodeOAIRequest(r, &req); err != nil {
			s.oaiError(w, r, err)
			return
		}
		if !counted {
			if err := s.countApart(r); err != nil {
				s.oaiError(w, r, err)
				return
			}
		}
		tr, held, forked, err := s.oaiTurn(r, &req)
		if err != nil {
			s.oaiError(w, r, err)
			return
		}
		t, err := s.runner.Prepare(r.Context(), tr)
		if err != nil {
			if forked {
				s.dropFork(r, tr.SessionID)
			}
			s.oaiError(w, r, orNotFound(err, "session"))
			return
		}
		live, done, _, err := s.runLive(r.Context(), t)
		if err != nil {
			s.oaiError(w, r, err)
			return
		}
		sid := t.SessionID()
		w.Header().Set("X-Coachd-Session-Id", sid)
		// The conversation without its reply is remembered too, while
		// the turn runs: for a reply the client will not get whole (Stop
		// in a chat UI, an error), its next message resends whatever it
		// kept of it, which only the client knows.
		// It holds the session's messages up to this turn's user message.
		through := held + 1
		if tr.Retry {
			through = held // stored already
		}
		if sid != tr.SessionID {
			through = 1 // a new session
		}
		s.saveFingerprint(r, req, nil, sid, through)
		id := "chatcmpl-" + sid + "-" + strconv.FormatInt(live.Turn(), 10)
		created := time.Now().Unix()
		var reply strings.Builder
		var end coachd.Event
		var turnErr *coachd.Error
		// collect turns the turn's events into text: the reply, and an
		// interactive question as numbered choices.
		collect := func(ev coachd.Event) string {
			switch ev.Type {
			case coachd.EventTextDelta:
				return ev.Text
			case coachd.EventInteractionRequested:
				return optionsText(ev.Input)
			case coachd.EventApprovalRequired:
				return approvalText(ev)
			case coachd.EventError:
				turnErr = ev.Err
			case coachd.EventTurnEnded:
				end = ev
				if turnErr == nil {
					turnErr = s.drainCut(ev.StopReason)
				}
			}
			return ""
		}
		var unsent bool
		if req.Stream {
			// The conversation is remembered before the client reads its
			// end, so that its next request finds the session.
			unsent = s.streamCompletion(w, r, live.Turn(), sid, id, created, req, collect, &reply, &turnErr,
				func() { s.saveFingerprint(r, req, new(reply.String()), sid, -1) })
		} else {
			err = s.hub.Follow(r.Context(), UserFrom(r.Context()).ID, sid, coachd.EventID{}, live.Turn(), func(ev coachd.Event) error {
				reply.WriteString(collect(ev))
				return nil
			})
		}
		<-done
		if err != nil {
			// The server's drain cut the turn (the reader got its
			// server_shutdown error): say so, not an empty 200. Any other
			// end is the client's, gone.
			if turnErr != nil {
				s.oaiError(w, r, turnErr)
			}
			return
		}
		// A turn that failed after some text is still an error: its
		// text so far in a 200 would read as the whole reply.
		if turnErr != nil && (!req.Stream || unsent) {
			s.oaiError(w, r, turnErr)
			return
		}
		if req.Stream {
			return
		}
		text := reply.String()
		s.saveFingerprint(r, req, &text, sid, -1)
		s.encode(w, r, http.StatusOK, oaiChunk{ID: id, Object: "chat.completion", Created: created, Model: req.Model,
			Choices: []oaiChoice{{Message: &oaiAnswer{Role: "assistant", Content: text}, FinishReason: finishReason(end.StopReason)}},
			Usage:   usageOf(end.Usage)})
	})
}

// streamCompletion streams the turn as chat.completion.chunk data lines.
// It reports unsent when the turn failed before anything was sent: the
// caller answers its error as a response of its own.
func (s *Server) streamCompletion(w http.ResponseWriter, r *http.Request, turn int64, sid, id string, created int64, req oaiRequest,
	collect func(coachd.Event) string, reply *strings.Builder, turnErr **coachd.Error, remember func()) (unsent bool) {
	s.observer.StreamOpened()
	defer s.observer.StreamClosed()
	sw := sse.NewWriter(w, r, sse.Coachd, s.heartbeat)
	sw.SetWriteTimeout(s.writeTime)
	defer sw.Close()
	chunk := func(d *oaiDelta, finish *string) oaiChunk {
		return oaiChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []oaiChoice{{Delta: d, FinishReason: finish}}}
	}
	// The role chunk, and with it the headers, waits for the model's
	// first output: a turn that fails before it (the model down or
	// overloaded) is then answered with its error's HTTP status, which
	// the openai SDKs raise and retry; a 200 is a success to them. The
	// first words are not held back, and the heartbeat keeps a long
	// wait open (it commits the 200).
	var begun, reported bool
	begin := func() error {
		if begun {
			return nil
		}
		begun = true
		return sw.SendData(chunk(&oaiDelta{Role: "assistant"}, nil))
	}
	// errorChunk tells the client of e as OpenAI does in a stream: a data
	// line of the error object alone. A chunk's fields beside it would
	// make clients that read the line as a chunk first drop the error.
	errorChunk := func(e *coachd.Error) error {
		reported = true
		typ := oaiErrorTypes[e.Code]
		if typ == "" {
			typ = "api_error"
		}
		return sw.SendData(oaiErrorBody(e.Message, typ, e.Code))
	}
	s.hub.Follow(r.Context(), UserFrom(r.Context()).ID, sid, coachd.EventID{}, turn, func(ev coachd.Event) error {
		text := collect(ev)
		switch ev.Type {
		case coachd.EventTurnStarted, coachd.EventUsage, coachd.EventError:
		case coachd.EventTurnEnded:
			remember()
			if e := *turnErr; e != nil {
				if !begun {
					return nil // answered below, with its status if it can be
				}
				return errorChunk(e)
			}
			if err := begin(); err != nil {
				return err
			}
			if err := sw.SendData(chunk(&oaiDelta{}, finishReason(ev.StopReason))); err != nil {
				return err
			}
			if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
				return sw.SendData(oaiChunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
					Choices: []oaiChoice{}, Usage: usageOf(ev.Usage)})
			}
			return nil
		default:
			if err := begin(); err != nil {
				return err
			}
		}
		if text != "" {
			reply.WriteString(text)
			return sw.SendData(chunk(&oaiDelta{Content: text}, nil))
		}
		return nil
	})
	if e := *turnErr; e != nil && !reported {
		// The turn failed before the stream began, or the server's drain
		// cut it: its error, not a [DONE] that reads as a whole reply.
		if sw.Abandon() {
			return true
		}
		errorChunk(e)
	}
	sw.SendDone()
	return false
}

// saveFingerprint remembers that the conversation of req, with reply
// (nil: without one), continues session sid, holding its first messages
// (-1: all it has now).
func (s *Server) saveFingerprint(r *http.Request, req oaiRequest, reply *string, sid string, messages int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
	defer cancel()
	if err := s.store.SaveFingerprint(ctx, UserFrom(r.Context()).ID, fingerprint(req.Model, req.Messages, reply), sid, messages); err != nil {
		s.log(r).Warn("save conversation fingerprint", "session", sid, "err", err)
	}
}

// drainCut is the error of a turn that ended with stop when the server's
// drain stopped it (a turn stopped otherwise, or ended, has none): an
// OpenAI client cannot resume, and a reply cut short must not read as
// whole. Follow may hand the turn's end before the shutdown's notice.
func (s *Server) drainCut(stop string) *coachd.Error {
	if stop != coachd.TurnAborted || !s.draining.Load() {
		return nil
	}
	return &coachd.Error{Code: stream.CodeShutdown, Message: "the server is restarting: send the request again", Retryable: true}
}
