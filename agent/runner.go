package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

// MaxMessageChars bounds one user message.
const MaxMessageChars = 32000

// MaxTrustedMessageChars bounds the message of a trusted turn: a review's
// brief or an autobuild player's feedback, which coachd builds from parts
// bounded where they came in (100 requirements of 2,000 characters and a
// 64 KiB report; a decision of 256 KiB).
const MaxTrustedMessageChars = 320_000

// DefaultInteractionTTL is how long an interactive tool call waits for its
// answer.
const DefaultInteractionTTL = 24 * time.Hour

// Config wires a Runner.
type Config struct {
	Store  coachd.Store
	Model  coachd.Model
	Tools  *Toolset
	Logger *slog.Logger
	Clock  coachd.Clock
	// Agents resolves an agent by name; "" asks for the default. Nil serves
	// DefaultAgent only.
	Agents func(name string) (*Agent, bool)
	// InteractionTTL defaults to DefaultInteractionTTL.
	InteractionTTL time.Duration
	// CountTokens estimates reservations with the model's count_tokens
	// (when the model is a coachd.TokenCounter) instead of from size.
	CountTokens bool
	// BudgetUnit is what reservations and charges count (tokens when
	// empty): usage is priced per call with BudgetUnit.Charge.
	BudgetUnit coachd.BudgetUnit
	// DefaultModel is the model id Model serves a request naming none
	// (coachd serve's --model): the turns and records of an agent that
	// names no model are priced at it.
	DefaultModel string
	// Observer is told about turns, tools and errors (metrics); nil
	// observes nothing.
	Observer coachd.Observer
	// TurnLease is how long a session stays busy after the process
	// running its turn died (the lease is renewed while the turn runs);
	// defaults to DefaultTurnLease.
	TurnLease time.Duration
	// ModelFor returns the model of an agent that names a Provider; nil,
	// or a nil result, uses Model.
	ModelFor func(*Agent) coachd.Model
}

// Runner runs turns.
type Runner struct {
	cfg   Config
	guard *guard
	hist  *historyCache
	mcp   mcpCache // turn tool sets with MCP tools, reused while the lists hold
}

// NewRunner returns a Runner.
func NewRunner(cfg Config) *Runner {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Clock == nil {
		cfg.Clock = coachd.SystemClock{}
	}
	if cfg.Agents == nil {
		def := DefaultAgent()
		cfg.Agents = func(name string) (*Agent, bool) {
			if name == "" || name == def.Name {
				return def, true
			}
			return nil, false
		}
	}
	if cfg.InteractionTTL <= 0 {
		cfg.InteractionTTL = DefaultInteractionTTL
	}
	if cfg.TurnLease <= 0 {
		cfg.TurnLease = DefaultTurnLease
	}
	if cfg.Observer == nil {
		cfg.Observer = coachd.NopObserver{}
	}
	return &Runner{cfg: cfg, guard: newGuard(cfg.Store, cfg.Clock), hist: newHistoryCache()}
}

// Agent resolves an agent by name ("" is the default).
func (r *Runner) Agent(name string) (*Agent, bool) { return r.cfg.Agents(name) }

// Toolset returns the runner's tools.
func (r *Runner) Toolset() *Toolset { return r.cfg.Tools }

// History returns the user's session's stored messages, from the
// runner's history cache and a read of what follows (an attachment of an
// old message may be left without its data): for a look at a session
// before its turn, which then finds them cached.
func (r *Runner) History(ctx context.Context, userID, sessionID string) ([]*coachd.Message, error) {
	return r.hist.history(ctx, r.cfg.Store, userID, sessionID)
}

// InteractionTTL is how long a paused call waits for its answer.
func (r *Runner) InteractionTTL() time.Duration { return r.cfg.InteractionTTL }

// MaxErrorAnswer bounds an error answer's content (Answer.IsError): why
// the client has no output, not the output.
const MaxErrorAnswer = 8 << 10

// Answer is the user's answer to a pending interactive tool call.
type Answer struct {
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	// IsError: the client could not give the tool's output, and Content
	// says why. It is stored as an error result (the tool's result
	// schema does not apply); a call waiting for approval so answered is
	// denied.
	IsError bool `json:"is_error,omitempty"`
}

// TurnRequest is one user turn.
type TurnRequest struct {
	User      *coachd.User
	SessionID string // "" creates a session
	Agent     string // used when creating a session
	Message   string
	Answer    *Answer
	// Continues is the id of the client's message an Answer goes on with
	// (useChat's assistant message), kept in the turn's turn_started.
	Continues string
	// Attachments are image and document blocks (coachd.AttachmentBlock,
	// already checked), stored in the user message before its text.
	Attachments []coachd.Block
	// Context is what the client sent beside the message for the model
	// (seed 000's replay_id): sent with the turn's context, after the
	// user's words (withTail), and not stored.
	Context string
	// Retry runs again a turn that failed before the model answered: its
	// user message is stored already and is not stored twice.
	Retry bool
	// RetryPartial lets Retry also run again a turn whose reply broke
	// off (the last message, stored partial): the model does not see the
	// broken text, then or later (useChat's regenerate after an error).
	RetryPartial bool
	// Resent runs again, as Retry with RetryPartial does, the turn of a
	// Message (or an Answer) that is the session's last unanswered one
	// sent again: its turn failed before the coach replied (or in the
	// reply, or between tool rounds), and a client that knows no retry
	// (seeds 000 and 002) sends the same message, or taps the same
	// option, again. The same words after a reply are a new message.
	Resent bool
	// Wait queues behind a running turn instead of failing (on_busy=wait).
	Wait bool
	// Trusted turns come from the admin, a review or another agent; only
	// they may run an internal agent (triggers: []).
	Trusted bool
	// Bound replaces, for this turn only, the runner's tools of the same
	// name (or adds them): a review binds read_file, run_command,
	// record_decision… to its workspace and trace.
	Bound []coachd.Tool
	// Stream begins the turn's event log in its admission (Turn.StreamTurn).
	Stream *coachd.StreamStart
	// Behind lets a new message's admission commit behind the first
	// model request (TurnAdmission.Behind): Prepare returns once its
	// statements ran, and the caller waits for Turn.Admitted before it
	// answers the client. The turn sends nothing (turn_started included)
	// and writes nothing more before the commit is done.
	Behind bool
	// Limits are counted in the turn's admission (TurnAdmission.Limits):
	// one reached fails Prepare with coachd.ErrLimitReached, nothing
	// counted nor taken.
	Limits []coachd.LimitHit
}

// Valid checks the request's shape.
func (req *TurnRequest) Valid() []coachd.FieldError {
	var errs []coachd.FieldError
	switch {
	case req.Retry && (req.Message != "" || req.Answer != nil || len(req.Attachments) > 0):
		errs = append(errs, coachd.FieldError{Field: "retry", Message: "goes alone: it re-runs the stored message", Code: "exclusive"})
	case req.Retry && req.SessionID == "":
		errs = append(errs, coachd.FieldError{Field: "session_id", Message: "is required with retry", Code: "required"})
	case !req.Retry && coachd.Blank(req.Message) && req.Answer == nil && len(req.Attachments) == 0:
		errs = append(errs, coachd.FieldError{Field: "message", Message: "message, attachments, tool_result or retry is required", Code: "required"})
	}
	if len(req.Attachments) > coachd.MaxAttachments {
		errs = append(errs, coachd.FieldError{Field: "attachments", Message: fmt.Sprintf("must be at most %d", coachd.MaxAttachments), Code: "length"})
	}
	limit := MaxMessageChars
	if req.Trusted {
		limit = MaxTrustedMessageChars
	}
	if utf8.RuneCountInString(req.Message) > limit {
		errs = append(errs, coachd.FieldError{Field: "message", Message: fmt.Sprintf("must be at most %d characters", limit), Code: "length"})
	}
	if req.SessionID != "" && !coachd.ValidID(coachd.PrefixSession, req.SessionID) {
		errs = append(errs, coachd.FieldError{Field: "session_id", Message: "is not a session id", Code: "format"})
	}
	if a := req.Answer; a != nil {
		if a.ToolUseID == "" || len(a.ToolUseID) > 200 {
			errs = append(errs, coachd.FieldError{Field: "tool_result.tool_use_id", Message: "is required", Code: "required"})
		}
		if len(a.Content) == 0 {
			errs = append(errs, coachd.FieldError{Field: "tool_result.content", Message: "is required", Code: "required"})
		} else if a.IsError && len(a.Content) > MaxErrorAnswer {
			errs = append(errs, coachd.FieldError{Field: "tool_result.content", Message: fmt.Sprintf("an error answer is at most %d bytes", MaxErrorAnswer), Code: "length"})
		}
		if req.SessionID == "" {
			errs = append(errs, coachd.FieldError{Field: "session_id", Message: "is required with tool_result", Code: "required"})
		}
	}
	return errs
}

// Prepare checks a turn and takes the session's turn slot: every error it
// returns happens before anything is streamed or stored. The caller must
// Run or Close the returned Turn.
func (r *Runner) Prepare(ctx context.Context, req TurnRequest) (*Turn, error) {
	if errs := req.Valid(); len(errs) > 0 {
		return nil, coachd.Invalid(errs...)
	}
	// A new session is created first; the turn then reads it like any.
	created := ""
	if req.SessionID == "" {
		sess, err := r.session(ctx, req.User, "", req.Agent, req.Message, req.Trusted)
		if err != nil {
			return nil, err
		}
		req.SessionID, created = sess.ID, sess.ID
	}
	t, err := r.admit(ctx, req)
	if err != nil && created != "" {
		r.dropSession(ctx, req.User.ID, created)
	}
	return t, err
}

// dropSession deletes the session a refused turn created: the turn
// stored nothing in it, and left, the session would be an empty
// conversation in the user's list, one per retry.
func (r *Runner) dropSession(ctx context.Context, userID, sessionID string) {
	wctx, done := persistCtx(ctx)
	defer done()
	if err := r.cfg.Store.DeleteSession(wctx, userID, sessionID); err != nil {
		r.cfg.Logger.Warn("deleting the session of a refused turn", "session", sessionID, "err", err)
	}
}

// session finds the user's session, or creates one for agentName (titled
// after the first message) when sessionID is empty.
func (r *Runner) session(ctx context.Context, u *coachd.User, sessionID, agentName, message string, trusted bool) (*coachd.Session, error) {
	if sessionID != "" {
		return r.cfg.Store.FindSession(ctx, u.ID, sessionID)
	}
	ag, err := r.agentFor(agentName, trusted)
	if err != nil {
		return nil, err
	}
	sess := &coachd.Session{UserID: u.ID, Agent: ag.Name, Title: title(message)}
	if err := r.cfg.Store.CreateSession(ctx, sess); err != nil {
		return nil, err
	}
	return sess, nil
}

// checkSession validates the turn against the session's state.
func (t *Turn) checkSession() error {
	s := t.sess
	if s.Status != coachd.SessionActive {
		return coachd.Errorf(coachd.ECONFLICT, "session is %s; start a new session", s.Status)
	}
	if t.req.Retry {
		h := t.history
		if k := brokenReply(h); t.req.RetryPartial && k > 0 {
			// Clipped: the array may be the history cache's.
			h = slices.Clip(h[:len(h)-k])
			t.history = h
		}
		if s.Pending != nil || len(h) == 0 || h[len(h)-1].Role != coachd.RoleUser {
			return coachd.Errorf(coachd.ECONFLICT, "nothing to retry: the session's last turn has its reply")
		}
		return nil
	}
	a := t.req.Answer
	if a == nil {
		return nil
	}
	p := s.Pending
	if p == nil {
		return coachd.Errorf(coachd.ECONFLICT, "the session has no pending interaction to answer")
	}
	if p.ToolUseID != a.ToolUseID {
		return coachd.Errorf(coachd.ECONFLICT, "tool_use_id %q does not match the pending interaction", a.ToolUseID)
	}
	if !p.ExpiresAt.IsZero() && t.r.cfg.Clock.Now().After(p.ExpiresAt) {
		return coachd.Errorf(coachd.ECONFLICT, "the pending interaction expired; send a message instead")
	}
	if a.IsError {
		return nil // any text: it is why there is no output
	}
	return t.validateAnswer(p, a.Content)
}

func title(msg string) string {
	msg = strings.Join(strings.Fields(msg), " ")
	if utf8.RuneCountInString(msg) <= 60 {
		return msg
	}
	r := []rune(msg)
	return string(r[:57]) + "..."
}
