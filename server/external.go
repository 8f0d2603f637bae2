package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// The API for apps that run their own model loop: tool schemas and
// execution, and preflight → record → abort around the app's turn.

func (s *Server) handleToolList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.runner == nil {
			s.Error(w, r, coachd.Errorf(coachd.EAPI, "this server has no runner configured"))
			return
		}
		specs, err := s.runner.ToolSpecsContext(r.Context(), r.URL.Query().Get("agent"))
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusOK, map[string]any{"tools": specs})
	})
}

type toolExecRequest struct {
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	SessionID string          `json:"session_id"`
	Agent     string          `json:"agent"`
}

func (req toolExecRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	if req.ToolName == "" || len(req.ToolName) > 200 {
		errs = append(errs, coachd.FieldError{Field: "tool_name", Message: "is required", Code: "required"})
	}
	if req.SessionID != "" && !coachd.ValidID(coachd.PrefixSession, req.SessionID) {
		errs = append(errs, coachd.FieldError{Field: "session_id", Message: "is not a session id", Code: "format"})
	}
	if len(req.ToolUseID) > 200 {
		errs = append(errs, coachd.FieldError{Field: "tool_use_id", Message: "must be at most 200 characters", Code: "length"})
	} else if req.ToolUseID != "" && !coachd.ValidToolUseID(req.ToolUseID) {
		// It goes to the tool (a webhook's header and body) and into the
		// history the API reads: the API's own pattern.
		errs = append(errs, coachd.FieldError{Field: "tool_use_id", Message: "must be letters, digits, _ and - (a Messages API tool_use id)", Code: "format"})
	}
	return errs
}

func (s *Server) handleToolExecute() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.runner == nil {
			s.Error(w, r, coachd.Errorf(coachd.EAPI, "this server has no runner configured"))
			return
		}
		req, err := decode[toolExecRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		input := req.ToolInput
		if len(input) == 0 {
			input = json.RawMessage("{}")
		}
		out, err := s.runner.ExecuteTool(r.Context(), agent.ExecRequest{
			User: UserFrom(r.Context()), SessionID: req.SessionID, Agent: req.Agent,
			Call: coachd.ToolCall{ID: req.ToolUseID, Name: req.ToolName, Input: input},
		})
		if err != nil {
			s.Error(w, r, orNotFound(err, "session"))
			return
		}
		s.encode(w, r, http.StatusOK, execResponse{out.ToolName, coachd.JSONOrString(out.Result), out.IsError})
	})
}

// execResponse is a tool's result as seed 000's client reads it: the
// result object itself when the tool answered JSON.
type execResponse struct {
	ToolName string          `json:"tool_name"`
	Result   json.RawMessage `json:"result"`
	IsError  bool            `json:"is_error"`
}

type preflightRequest struct {
	Message   string `json:"message"`
	SessionID string `json:"session_id"`
	Agent     string `json:"agent"`
	// ReplayID is seed 000's replay the user asks about: the model is
	// told it in the system message and the turn's context, as a
	// streamed turn tells it (chatRequest), so the app's tools can look
	// it up.
	ReplayID string `json:"replay_id"`
}

func (req preflightRequest) Valid(context.Context) []coachd.FieldError {
	if len(req.Agent) > 100 {
		return []coachd.FieldError{{Field: "agent", Message: "must be at most 100 characters", Code: "length"}}
	}
	if len(req.ReplayID) > 200 {
		return []coachd.FieldError{{Field: "replay_id", Message: "must be at most 200 characters", Code: "length"}}
	}
	tr := agent.TurnRequest{SessionID: req.SessionID, Message: req.Message}
	return tr.Valid()
}

func (s *Server) handlePreflight() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The rate counts every request, before its body is read; a
		// per-message limit the message, but not one sent again after its
		// turn failed (seed 000 aborts it, then the user resends it),
		// which was counted when it was first sent.
		if err := s.checkHits(r, func(h coachd.LimitHit) bool { return !h.PerMessage }); err != nil {
			s.Error(w, r, err)
			return
		}
		if s.runner == nil {
			s.Error(w, r, coachd.Errorf(coachd.EAPI, "this server has no runner configured"))
			return
		}
		req, err := decode[preflightRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		var capped error
		if !s.preflightResent(r.Context(), req) {
			capped = s.checkHits(r, func(h coachd.LimitHit) bool { return h.PerMessage })
		}
		if capped != nil && !errors.Is(capped, errMonthlyCap) {
			s.Error(w, r, capped)
			return
		}
		if capped != nil {
			// An allowance used up, answered as the budget's refusal:
			// seed 000's route shows its own 402 for it, where a 429
			// made it throw (a 500). Nothing was read, held or created.
			s.observer.Rejected(coachd.ERATELIMITED)
			s.encode(w, r, http.StatusOK, refusedPreflight(req.SessionID, coachd.AsError(capped)))
			return
		}
		pf, err := s.runner.Preflight(r.Context(), agent.PreflightRequest{
			User: UserFrom(r.Context()), Message: req.Message, SessionID: req.SessionID, Agent: req.Agent,
		})
		if e := coachd.AsError(err); err != nil && e.Code == coachd.EBUDGET {
			s.encode(w, r, http.StatusOK, refusedPreflight(req.SessionID, e))
			return
		}
		if err != nil {
			s.Error(w, r, orNotFound(err, "session"))
			return
		}
		if c := replayContext(req.ReplayID); c != "" {
			pf.SystemMessage += "\n\n" + c
			pf.TurnContext = append(pf.TurnContext, coachd.TextBlock(c))
		}
		s.encode(w, r, http.StatusOK, pf)
	})
}

// preflightResent reports whether req sends again the message of its session's
// last turn, which ended with no reply (unanswered).
func (s *Server) preflightResent(ctx context.Context, req preflightRequest) bool {
	if req.SessionID == "" || strings.TrimSpace(req.Message) == "" {
		return false
	}
	m := &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(req.Message)}, Content: req.Message}
	return s.unanswered(ctx, UserFrom(ctx).ID, req.SessionID, m)
}

// preflightRefused is a preflight the budget or the monthly message
// limit refused, answered 200: seed 000's chatPreflight throws on any
// other status, and its route answers its own 402 when budget_remaining
// is 0. Nothing is held (no reservation_id, which record and abort
// refuse) and no session is created; error is the budget_exhausted a 402
// would carry, or the monthly limit's rate_limit_exceeded (usage, limit).
type preflightRefused struct {
	SessionID       string                `json:"session_id"`
	ReservationID   string                `json:"reservation_id"`
	EstimatedTokens int64                 `json:"estimated_tokens"`
	BudgetRemaining int64                 `json:"budget_remaining"`
	IsFreePreview   bool                  `json:"is_free_preview"`
	SystemMessage   string                `json:"system_message"`
	History         []coachd.ModelMessage `json:"history"`
	Error           any                   `json:"error"`
}

// refusedPreflight answers a preflight in sessionID ("" for a new one)
// that e, a budget_exhausted or the monthly limit's, refused.
func refusedPreflight(sessionID string, e *coachd.Error) preflightRefused {
	est, _ := e.Extra["estimated_tokens"].(int64)
	return preflightRefused{SessionID: sessionID, EstimatedTokens: est, History: []coachd.ModelMessage{}, Error: errorValue(e)}
}

// recordMessage is one message an external loop reports.
type recordMessage struct {
	Role          coachd.Role    `json:"role"`
	ContentBlocks []coachd.Block `json:"content_blocks"`
	ContentText   string         `json:"content_text"`
}

type recordRequest struct {
	SessionID       string          `json:"session_id"`
	ReservationID   string          `json:"reservation_id"`
	Messages        []recordMessage `json:"messages"`
	PartialMessages []recordMessage `json:"partial_messages"` // abort
	TokensUsed      *int64          `json:"tokens_used"`
	// Usage is the turn's cumulative usage as the Messages API reports
	// it, optional: with it a weighted or usd budget is charged exactly
	// (and tokens_used is not read); without it tokens_used is priced
	// as uncached input tokens.
	Usage *recordUsage `json:"usage"`
	// Final settles the reservation; absent, record settles it (seed 000
	// never sends it) and a later record of the same turn still charges
	// its extra tokens. final: false keeps it open for multi-step callers.
	Final *bool `json:"final"`
	// Seed 000 sends these back from its preflight; the reservation holds
	// both already, so they are accepted and not used.
	EstimatedTokens *int64 `json:"estimated_tokens"`
	IsFreePreview   *bool  `json:"is_free_preview"`
}

func (req recordRequest) Valid(context.Context) []coachd.FieldError {
	var errs []coachd.FieldError
	if !coachd.ValidID(coachd.PrefixSession, req.SessionID) {
		errs = append(errs, coachd.FieldError{Field: "session_id", Message: "is required: a session id", Code: "format"})
	}
	if !coachd.ValidID(coachd.PrefixReservation, req.ReservationID) {
		errs = append(errs, coachd.FieldError{Field: "reservation_id", Message: "is required: a reservation id", Code: "format"})
	}
	if req.TokensUsed != nil && (*req.TokensUsed < 0 || *req.TokensUsed > coachd.MaxTurnTokens) {
		errs = append(errs, coachd.FieldError{Field: "tokens_used", Message: fmt.Sprintf("must be 0 to %d (the turn's cumulative tokens)", coachd.MaxTurnTokens), Code: "range"})
	}
	if u := req.Usage; u != nil {
		errs = u.appendErrs(errs)
	}
	if len(req.Messages)+len(req.PartialMessages) > 100 {
		errs = append(errs, coachd.FieldError{Field: "messages", Message: "at most 100 messages per call", Code: "length"})
	}
	errs = appendMessageErrs(errs, "messages", req.Messages)
	return appendMessageErrs(errs, "partial_messages", req.PartialMessages)
}

// appendMessageErrs checks recorded messages, their blocks with the
// Messages API's rules once made safe to replay (coachd.RecordBlocks):
// they are replayed to the API on every later turn of the session.
func appendMessageErrs(errs []coachd.FieldError, name string, msgs []recordMessage) []coachd.FieldError {
	for i, m := range msgs {
		at := fmt.Sprintf("%s[%d]", name, i)
		if m.Role != coachd.RoleUser && m.Role != coachd.RoleAssistant {
			errs = append(errs, coachd.FieldError{Field: at + ".role", Message: "must be user or assistant", Code: "enum"})
			continue
		}
		// A reply may be empty (the API's end_turn with no content,
		// recorded as it came): left out, as message says.
		if m.Role == coachd.RoleUser && len(m.ContentBlocks) == 0 && strings.TrimSpace(m.ContentText) == "" {
			errs = append(errs, coachd.FieldError{Field: at + ".content_blocks", Message: "is required", Code: "required"})
		}
		_, blockErrs := coachd.RecordBlocks(m.Role, m.ContentBlocks)
		for _, e := range blockErrs {
			e.Field = at + ".content_blocks" + e.Field
			errs = append(errs, e)
		}
	}
	return errs
}

// message is m as it is stored, or nil when nothing of it is left to
// store: seed 000 records the user message of every round after the
// first as one empty text block, and a reply may be only thinking, or
// nothing at all.
// Leaving either out keeps the history valid, as the replay merges the
// messages of one role that then meet (agent.History).
func (m recordMessage) message(partial bool) *coachd.Message {
	blocks, _ := coachd.RecordBlocks(m.Role, m.ContentBlocks)
	if len(blocks) == 0 {
		if strings.TrimSpace(m.ContentText) == "" {
			return nil
		}
		blocks = []coachd.Block{coachd.TextBlock(m.ContentText)}
	}
	// The content is the blocks' text, as every stored message's: seed
	// 000's content_text is the whole turn's text so far, earlier rounds'
	// replies too.
	return &coachd.Message{Role: m.Role, Blocks: blocks, Content: coachd.BlocksText(blocks), Partial: partial}
}

// recordResponse is the answer of record and abort.
type recordResponse struct {
	SessionID       string                  `json:"session_id"`
	ReservationID   string                  `json:"reservation_id"`
	State           coachd.ReservationState `json:"state"`
	TokensCharged   int64                   `json:"tokens_charged"`
	BudgetRemaining int64                   `json:"budget_remaining"`
	Aborted         bool                    `json:"aborted,omitempty"` // abort: seed 000's {"aborted": true}
}

// handleRecord stores an external turn's messages and settles its tokens
// (cumulative: calling it after every round and at the end charges once).
// abort settles as an abort. A retry with the same Idempotency-Key header
// does nothing twice, nor does the same body again without one.
func (s *Server) handleRecord(abort bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := decode[recordRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		key, err := idempotencyKey(r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		rec := coachd.TurnRecord{
			SessionID: body.SessionID, ReservationID: body.ReservationID, Final: body.final(), Abort: abort,
			IdempotencyKey: key, RequestHash: requestHash(r.URL.Path, body),
			// Seed 000 aborts when the model's stream threw, mid-reply or
			// not, and says nothing of what it spent: a free turn counts.
			Answered: abort && (body.TokensUsed == nil && body.Usage == nil || body.replied()),
		}
		if key == "" {
			// Seed 000 sends no key: the same body again on the same
			// reservation is its retry (a later call of the turn has more
			// tokens, tokens_used being cumulative), answered as the first
			// was, not stored twice.
			rec.IdempotencyKey = "repeat " + body.ReservationID + " " + rec.RequestHash
		}
		if body.TokensUsed != nil {
			rec.TokensUsed = *body.TokensUsed
		}
		if s.runner != nil {
			sp, err := s.runner.RecordSpend(r.Context(), UserFrom(r.Context()).ID, body.ReservationID, rec.TokensUsed, body.Usage.usage())
			if err != nil {
				s.Error(w, r, orNotFound(err, "session or reservation"))
				return
			}
			rec.TokensUsed, rec.Amount = sp.Tokens, sp.Amount
		}
		for i, m := range slices.Concat(body.Messages, body.PartialMessages) {
			if msg := m.message(i >= len(body.Messages)); msg != nil {
				rec.Messages = append(rec.Messages, msg)
			}
		}
		if len(rec.Messages) > 0 && s.unanswered(r.Context(), UserFrom(r.Context()).ID, body.SessionID, rec.Messages[0]) {
			rec.Messages = rec.Messages[1:]
		}
		res, err := s.store.Record(r.Context(), UserFrom(r.Context()).ID, rec)
		if err != nil {
			s.Error(w, r, orNotFound(err, "session or reservation"))
			return
		}
		s.encode(w, r, http.StatusOK, recordResponse{
			SessionID: body.SessionID, ReservationID: res.ID, State: res.State,
			TokensCharged: res.Charged, BudgetRemaining: res.Remaining, Aborted: abort,
		})
	})
}

// unansweredTail is how many of a session's last messages unanswered
// reads: a failed turn's message and up to 30 tool rounds after it.
const unansweredTail = 64

// unanswered reports whether m, the user's words, is stored already as
// the message of the session's last turn, which ended with no reply
// (agent.UnansweredAt): a turn that failed (seed 000 aborts with the
// message as partial_messages, or after recording a tool round) recorded
// again with the message sent again. agent.Preflight leaves that turn out
// of the history the client extends.
func (s *Server) unanswered(ctx context.Context, userID, sessionID string, m *coachd.Message) bool {
	if m.Role != coachd.RoleUser || !m.OnlyBlocks(coachd.BlockText) {
		return false
	}
	msgs, _, err := s.store.ListMessages(ctx, userID, sessionID, coachd.Page{Before: coachd.BeforeEnd, Limit: unansweredTail})
	return err == nil && agent.UnansweredAt(msgs, m.Content) >= 0
}

// final is whether record settles the turn: as req.Final says, and when
// it says nothing (seed 000 never does), unless its last message is the
// user's tool results. The app's loop sends those to the model next: the
// turn goes on, and its hold stays until the record of its reply (or an
// abort, or the hold's expiry). Settled there, the rest of the hold went
// back to the budget while the turn still spent it.
func (req recordRequest) final() bool {
	if req.Final != nil {
		return *req.Final
	}
	if len(req.Messages) == 0 {
		return true
	}
	last := req.Messages[len(req.Messages)-1]
	return last.Role != coachd.RoleUser || !slices.ContainsFunc(last.ContentBlocks, func(b coachd.Block) bool {
		return b.Type == coachd.BlockToolResult
	})
}

// replied reports whether req records something the model said.
func (req recordRequest) replied() bool {
	for _, m := range slices.Concat(req.Messages, req.PartialMessages) {
		if m.Role == coachd.RoleAssistant && (len(m.ContentBlocks) > 0 || strings.TrimSpace(m.ContentText) != "") {
			return true // thinking only too: the model answered
		}
	}
	return false
}

func requestHash(path string, body any) string {
	b, _ := json.Marshal(body)
	sum := sha256.Sum256([]byte(strings.ToLower(path) + "\n" + string(b)))
	return hex.EncodeToString(sum[:])
}

// idempotencyKey is the request's Idempotency-Key header, "" without one.
func idempotencyKey(r *http.Request) (string, error) {
	key := r.Header.Get("Idempotency-Key")
	if len(key) > 200 {
		return "", coachd.Invalid(coachd.FieldError{Field: "Idempotency-Key", Message: "must be at most 200 characters", Code: "length"})
	}
	// HTTP lets bytes past ASCII through a header, which SQLite would
	// store and Postgres refuse: the key is printable ASCII on both.
	if strings.IndexFunc(key, func(c rune) bool { return c < 0x20 || c > 0x7e }) >= 0 {
		return "", coachd.Invalid(coachd.FieldError{Field: "Idempotency-Key", Message: "must be printable ASCII", Code: "format"})
	}
	return key, nil
}
