package server

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/mcp"
)

// handleMCP serves coachd as an MCP server (streamable HTTP) to the
// authenticated user: the instant tools of the agent named by ?agent=
// (the default agent without it), run as /v1/tools/execute runs them, and
// chat, a turn with a coach. Everything is the user's own.
func (s *Server) handleMCP() http.Handler {
	h := mcp.Handler(func(r *http.Request) (mcp.Backend, error) {
		return &mcpBackend{s: s, r: r, user: UserFrom(r.Context()), agent: r.URL.Query().Get("agent")}, nil
	}, s.logger.With("component", "mcp"))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.runner == nil {
			s.Error(w, r, coachd.Errorf(coachd.EAPI, "this server has no runner configured"))
			return
		}
		// An unknown or internal agent is the API's error, not a bare 400.
		if _, err := s.runner.AgentFor(r.URL.Query().Get("agent"), false); err != nil {
			s.Error(w, r, err)
			return
		}
		if err := mcpBody(r); err != nil {
			s.Error(w, r, err)
			return
		}
		hold := &mcpErrorWriter{ResponseWriter: w}
		h.ServeHTTP(hold, r)
		if hold.status != 0 {
			s.Error(w, r, mcpTransportError(hold.status, hold.text))
		}
	})
}

// mcpBackend is one request's user and agent.
type mcpBackend struct {
	s     *Server
	r     *http.Request
	user  *coachd.User
	agent string
}

func (b *mcpBackend) Tools(ctx context.Context) ([]coachd.ToolSpec, error) {
	specs, err := b.s.runner.ToolSpecsContext(ctx, b.agent)
	if err != nil {
		return nil, err
	}
	// Interactive tools wait for a user the MCP client is; lifecycle
	// tools change a running session: neither is a tool a client runs.
	out := specs[:0:0]
	for _, sp := range specs {
		// (An MCP server's tools are not in the base set: they are instant.)
		if c := b.s.runner.Toolset().Category(sp.Name); c != coachd.ToolInteractive && c != coachd.ToolLifecycle {
			out = append(out, sp)
		}
	}
	return out, nil
}

func (b *mcpBackend) Execute(ctx context.Context, name string, input json.RawMessage, sessionID string) (coachd.ToolResult, error) {
	if err := b.s.hitRate(b.r, "tool_rate", b.s.limits.ToolRate, "Tool rate limit (%d calls per %s) reached; retry later."); err != nil {
		return coachd.ToolResult{}, err
	}
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	// As for chat: the SDK does not pass the request's end on, and the
	// call follows its client.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(b.r.Context(), cancel)()
	out, err := b.s.runner.ExecuteTool(ctx, agent.ExecRequest{
		User: b.user, SessionID: sessionID, Agent: b.agent,
		Call: coachd.ToolCall{Name: name, Input: input},
	})
	if err != nil {
		return coachd.ToolResult{}, orNotFound(err, "session")
	}
	return coachd.ToolResult{Content: out.Result, IsError: out.IsError}, nil
}

func (b *mcpBackend) Chat(ctx context.Context, in mcp.ChatInput) (*mcp.ChatOutput, error) {
	if err := b.s.checkLimits(b.r); err != nil {
		return nil, err
	}
	if coachd.Blank(in.Message) {
		// The chat tool has no attachments, answer or retry: its message
		// is its one required field.
		return nil, coachd.Invalid(coachd.FieldError{Field: "message", Message: "is required: what the user says to the coach", Code: "required"})
	}
	if in.Agent == "" && in.SessionID == "" {
		in.Agent = b.agent
	}
	req := chatRequest{Message: in.Message, SessionID: in.SessionID, Agent: in.Agent}
	if errs := req.Valid(ctx); len(errs) > 0 {
		return nil, coachd.Invalid(errs...)
	}
	// The client shows text only: a question the coach asked is answered
	// by number or by the option's text, as on /v1/chat/completions.
	if coachd.ValidID(coachd.PrefixSession, in.SessionID) {
		if sess, err := b.s.store.FindSession(ctx, b.user.ID, in.SessionID); err == nil {
			if a := textAnswer(sess.Pending, in.Message, b.s.clock.Now()); a != nil {
				req.Message, req.ToolResult = "", a
			}
		}
	}
	t, err := b.s.runner.Prepare(ctx, req.turn(b.user, false))
	if err != nil {
		return nil, orNotFound(err, "session")
	}
	live, ctx, cancel, err := b.s.beginLive(WithUser(ctx, b.user), t)
	if err != nil {
		return nil, err
	}
	defer live.Finish()
	defer cancel(nil)
	// The SDK runs a call apart from its HTTP request, whose end (the
	// client gone, or a desktop client's cancel through coachd mcp) it
	// does not pass on; MCP cannot resume a reply. The turn follows the
	// client, as a cancel disconnect does, unless the agent says continue.
	if disconnectPolicy("", "mcp", t.Agent()) == agent.OnDisconnectCancel {
		defer context.AfterFunc(b.r.Context(), func() { cancel(errClientGone) })()
	}
	c := &collector{}
	res := t.Run(ctx, teeSink{live, c})
	if res.Err != nil && res.Text == "" {
		return nil, res.Err
	}
	c.mu.Lock()
	ia := c.interaction
	c.mu.Unlock()
	out := &mcp.ChatOutput{SessionID: res.SessionID, Text: res.Text, StopReason: res.StopReason}
	if res.Err != nil {
		out.Error = &mcp.ChatError{Code: res.Err.Code, Message: res.Err.Message}
	}
	if ia != nil {
		out.Text += interactionText(ia)
		out.Interaction = &mcp.ChatInteraction{ToolUseID: ia.ToolUseID, Name: ia.Name, Approval: ia.Approval, Reason: ia.Reason, ExpiresAt: ia.ExpiresAt}
		json.Unmarshal(ia.Input, &out.Interaction.Input) // a tool input: a JSON object
	}
	return out, nil
}
