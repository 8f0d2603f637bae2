package agent

import (
	"context"
	"strings"

	"github.com/coachd/coachd"
)

// This file serves apps that run the model loop themselves and use coachd
// for tools, history and budgets (preflight → execute → record). Each
// piece is the loop's own code: the same tool validation and execution,
// the same history repair, the same reservation.

// ToolSpecs returns the sanitized specs of the named agent's tools ("" is
// the default agent).
func (r *Runner) ToolSpecs(agentName string) ([]coachd.ToolSpec, error) {
	return r.ToolSpecsContext(context.Background(), agentName)
}

// ToolSpecsContext is ToolSpecs with the tools of the agent's MCP servers
// (started if needed, within ctx).
func (r *Runner) ToolSpecsContext(ctx context.Context, agentName string) ([]coachd.ToolSpec, error) {
	ag, err := r.agentFor(agentName, false)
	if err != nil {
		return nil, err
	}
	ag, ts := r.withMCP(ctx, ag, r.cfg.Tools)
	return ts.Specs(ag.Tools), nil
}

// ExecRequest asks to run one tool outside a turn.
type ExecRequest struct {
	User      *coachd.User
	SessionID string // "" runs the tool without a session
	Agent     string // used without a session; "" is the default agent
	Call      coachd.ToolCall
}

// ExecResult is a tool's result, shaped for the Messages API's
// tool_result: a failure the model should see is IsError, not an error.
type ExecResult struct {
	ToolName string `json:"tool_name"`
	Result   string `json:"result"`
	IsError  bool   `json:"is_error"`
}

// ExecuteTool validates and runs one tool call exactly as a round of the
// loop does (agent's tool list, contracts, JSON Schema, timeout, panic
// recovery). Interactive tools cannot run here: the app shows them.
func (r *Runner) ExecuteTool(ctx context.Context, req ExecRequest) (*ExecResult, error) {
	t, err := r.externalTurn(ctx, req.User, req.SessionID, req.Agent)
	if err != nil {
		return nil, err
	}
	c := req.Call
	if c.ID == "" {
		c.ID = "toolu_" + strings.TrimPrefix(coachd.NewID("x", r.cfg.Clock.Now()), "x_")
	}
	if tool, ok := t.tool(c.Name); ok {
		if t.tools.Category(c.Name) == coachd.ToolInteractive {
			return nil, coachd.Invalid(coachd.FieldError{Field: "tool_name", Message: "is an interactive tool: show it to the user and record their answer as its tool_result", Code: "interactive"})
		}
		// Nothing here can ask the user: such a call would come back
		// "not run" and read as a success.
		if _, ok := t.needsApproval(tool, c); ok {
			return nil, coachd.Invalid(coachd.FieldError{Field: "tool_name", Message: "needs the user's approval for this call: let a coachd turn run it (POST /v1/chat), which asks for it", Code: "approval"})
		}
	}
	outs, _ := t.runTools(ctx, t.agent.Limits.withDefaults(), []coachd.ToolCall{c})
	b := outs[0].block
	return &ExecResult{ToolName: c.Name, Result: b.ResultText(), IsError: b.IsError}, nil
}

// externalTurn is a Turn that never runs: the context the loop's helpers
// need (user, session, agent, a sink that drops events).
func (r *Runner) externalTurn(ctx context.Context, u *coachd.User, sessionID, agentName string) (*Turn, error) {
	var sess *coachd.Session
	if sessionID != "" {
		if !coachd.ValidID(coachd.PrefixSession, sessionID) {
			return nil, coachd.Errorf(coachd.ENOTFOUND, "session not found")
		}
		s, err := r.cfg.Store.FindSession(ctx, u.ID, sessionID)
		if err != nil {
			return nil, err
		}
		sess, agentName = s, s.Agent
	}
	ag, err := r.agentFor(agentName, false)
	if err != nil {
		return nil, err
	}
	if sess == nil {
		// No session: tools that need one fail as the model would see.
		sess = &coachd.Session{UserID: u.ID, Agent: ag.Name, Status: coachd.SessionActive}
	}
	t := &Turn{r: r, req: TurnRequest{User: u, SessionID: sess.ID, Agent: ag.Name}, agent: ag, sess: sess, sink: dropSink{}, tools: r.cfg.Tools, external: true}
	t.agent, t.tools = r.withMCP(ctx, ag, t.tools)
	t.x.called = map[string]bool{}
	return t, nil
}

// agentFor resolves the agent a request names ("" is the default). An
// internal agent (triggers: []) is refused unless the request is trusted:
// started by the admin, the review API or another agent, not a user key.
// AgentFor resolves the agent a request names ("" is the default) and
// checks that the caller may start it: an internal agent only when
// trusted. An unknown name is a 400 naming the field agent.
func (r *Runner) AgentFor(name string, trusted bool) (*Agent, error) {
	return r.agentFor(name, trusted)
}

func (r *Runner) agentFor(name string, trusted bool) (*Agent, error) {
	ag, ok := r.cfg.Agents(name)
	if !ok {
		return nil, errNoAgent()
	}
	if ag.Internal && !trusted {
		return nil, coachd.Errorf(coachd.EFORBIDDEN, "agent %q has no triggers: it is started by the admin, a review or another agent, not by a user key", ag.Name)
	}
	return ag, nil
}

// errNoAgent refuses a request naming an agent the runner does not have.
func errNoAgent() error {
	return coachd.Invalid(coachd.FieldError{Field: "agent", Message: "no such agent", Code: "not_found"})
}

type dropSink struct{}

func (dropSink) Send(coachd.Event) error { return nil }

// PreflightRequest starts a turn of an external loop.
type PreflightRequest struct {
	User      *coachd.User
	Message   string
	SessionID string // "" creates a session
	Agent     string
}

// Preflight is what an external loop needs for its first model call.
type Preflight struct {
	SessionID       string                `json:"session_id"`
	Agent           string                `json:"agent"`
	ReservationID   string                `json:"reservation_id"`
	EstimatedTokens int64                 `json:"estimated_tokens"`
	BudgetRemaining int64                 `json:"budget_remaining"`
	IsFreePreview   bool                  `json:"is_free_preview"`
	SystemMessage   string                `json:"system_message"`
	History         []coachd.ModelMessage `json:"history"`
	Tools           []coachd.ToolSpec     `json:"tools"`
	MaxTokens       int64                 `json:"max_tokens"`
	Model           string                `json:"model,omitempty"`
	// System is the system prompt as the blocks coachd itself sends, with
	// its cache_control markers (coachd.CacheMarks): send it as is.
	// TurnContext are the turn's context blocks (time, recent files, a
	// due check-in), which coachd sends after the user's words in the new
	// user message so that they never invalidate the cached history: append
	// them to your user message, and put cache_control on its last block
	// before them. SystemMessage is all of it as one text, for apps that
	// send a plain string (and cache less).
	System         []coachd.Block `json:"system"`
	TurnContext    []coachd.Block `json:"turn_context"`
	Temperature    *float64       `json:"temperature,omitempty"`
	ThinkingBudget int64          `json:"thinking_budget"` // 0: thinking off
}

// Preflight validates the message, finds or creates the session, builds
// the system prompt and the repaired history (Messages API form, without
// the new message, which the app sends and records itself) and reserves
// the turn's budget (EBUDGET when it does not fit: server answers it
// as a refused preflight, budget_remaining 0).
func (r *Runner) Preflight(ctx context.Context, req PreflightRequest) (*Preflight, error) {
	tr := TurnRequest{User: req.User, SessionID: req.SessionID, Agent: req.Agent, Message: req.Message}
	if errs := tr.Valid(); len(errs) > 0 {
		return nil, coachd.Invalid(errs...)
	}
	sess, err := r.session(ctx, req.User, req.SessionID, req.Agent, req.Message, false)
	if err != nil {
		return nil, err
	}
	pf, err := r.preflight(ctx, req, sess.ID)
	if err != nil && req.SessionID == "" {
		// As a refused turn's (Prepare): nothing was stored in it.
		r.dropSession(ctx, req.User.ID, sess.ID)
	}
	return pf, err
}

// preflight is Preflight's work on the session sessionID, found or
// created.
func (r *Runner) preflight(ctx context.Context, req PreflightRequest, sessionID string) (*Preflight, error) {
	st := r.cfg.Store
	t, err := r.externalTurn(ctx, req.User, sessionID, "")
	if err != nil {
		return nil, err
	}
	if t.sess.Status != coachd.SessionActive {
		return nil, coachd.Errorf(coachd.ECONFLICT, "session is %s; start a new session", t.sess.Status)
	}
	if p := t.sess.Pending; p != nil {
		// A turn recorded after the paused call would leave it waiting
		// behind other messages: answered later, it would run then.
		return nil, coachd.Errorf(coachd.ECONFLICT, "a tool call of this session (%s) waits for the user's answer: answer it through POST /v1/chat first", p.ToolUseID)
	}
	// ReadTurn, not History: no data of attachments too old to be sent.
	_, h, err := st.ReadTurn(ctx, req.User.ID, sessionID, 0)
	if err != nil {
		return nil, err
	}
	if i := UnansweredAt(h, req.Message); i >= 0 {
		// The message of a turn that failed (seed 000 aborts with it, or
		// after a tool round it recorded), sent again: the client adds it
		// to the history itself, so its turn is left out (its tool rounds
		// stay stored), and its record does not store it twice
		// (server.handleRecord).
		h = h[:i]
	}
	t.prepareSystem(ctx)
	history := History(compacted(h, t.agent.Compaction), t.tools.Truncations(t.agent.Tools))
	t.history = append(h, &coachd.Message{Role: coachd.RoleUser, Blocks: []coachd.Block{coachd.TextBlock(req.Message)}})
	mreq := t.modelRequest()
	res, err := st.Reserve(ctx, coachd.ReserveRequest{
		UserID: req.User.ID, SessionID: sessionID, Agent: t.agent.Name,
		Estimate: t.estimate(ctx, mreq), FreePreviewTurns: t.agent.FreePreviewTurns,
		// The session's earlier turn that recorded rounds and never a
		// final one (seed 000 at MAX_STEPS) ends here, at what it
		// recorded: the app began the next.
		Supersede: true,
	})
	if err != nil {
		return nil, err
	}
	var sys []string
	for _, b := range mreq.System {
		sys = append(sys, b.Text)
	}
	for _, b := range t.x.tail {
		sys = append(sys, b.Text)
	}
	marked, _ := coachd.CacheMarks(&coachd.ModelRequest{System: mreq.System, Tools: mreq.Tools})
	system, tail := marked.System, t.x.tail
	if system == nil {
		system = []coachd.Block{}
	}
	if tail == nil {
		tail = []coachd.Block{}
	}
	if history == nil {
		history = []coachd.ModelMessage{}
	}
	// budget_remaining is what the budget has left after the hold; a
	// turn admitted with nothing left after it (a free preview, or an
	// estimate that is exactly what remained) gets what it may spend,
	// its estimate: seed 000 refuses a turn whose budget_remaining is 0.
	remaining := res.Remaining
	if remaining == 0 {
		remaining = res.Estimate
	}
	return &Preflight{
		SessionID: sessionID, Agent: t.agent.Name, ReservationID: res.ID, EstimatedTokens: res.Estimate,
		BudgetRemaining: remaining, IsFreePreview: res.FreePreview,
		SystemMessage: strings.Join(sys, "\n\n"), History: history, Tools: mreq.Tools,
		MaxTokens: mreq.MaxTokens, Model: mreq.Model,
		System: system, TurnContext: tail, Temperature: mreq.Temperature, ThinkingBudget: mreq.ThinkingBudget,
	}, nil
}

// RecordSpend prices what an external loop reports for the turn of the
// user's reservation in the budget's unit: usage, when the loop sends the
// Messages API's usage, as coachd prices its own rounds; else tokens
// raw tokens, each priced as an uncached input token (the least any
// token but a cache read costs). Either is priced at the model of the
// reservation's agent (its session's, which may be gone since: the
// tokens are charged all the same), or its fallback's when dearer. A
// budget of tokens needs no price and reads nothing.
func (r *Runner) RecordSpend(ctx context.Context, userID, reservationID string, tokens int64, usage *coachd.Usage) (coachd.Spend, error) {
	u := coachd.Usage{InputTokens: tokens}
	if usage != nil {
		u = *usage
	}
	unit := r.cfg.BudgetUnit
	if unit == "" || unit == coachd.UnitTokens {
		n := min(u.Total(), coachd.MaxTurnTokens)
		return coachd.Spend{Amount: n, Tokens: n}, nil
	}
	res, err := r.cfg.Store.FindReservation(ctx, userID, reservationID)
	if err != nil {
		return coachd.Spend{}, err
	}
	var model, fallback string
	if ag, ok := r.cfg.Agents(res.Agent); ok {
		model, fallback = ag.Model, ag.FallbackModel
	}
	model = r.priced(model)
	n := unit.Charge(model, u)
	if fallback != "" {
		n = max(n, unit.Charge(fallback, u))
	}
	return coachd.Spend{Amount: n, Tokens: min(u.Total(), coachd.MaxTurnTokens)}, nil
}
