package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/coachd/coachd"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the server side: coachd as an MCP server, so a desktop
// client can read and write a user's notes and files and talk to a coach.

// Backend is what coachd's MCP server serves, for one authenticated user:
// the user's tools, run the way the API's /v1/tools/execute runs them, and
// turns with a coach.
type Backend interface {
	// Tools lists the tools a client may call (not chat).
	Tools(ctx context.Context) ([]coachd.ToolSpec, error)
	// Execute runs one tool, in sessionID when it is not "".
	Execute(ctx context.Context, name string, input json.RawMessage, sessionID string) (coachd.ToolResult, error)
	// Chat runs one turn and returns its reply.
	Chat(ctx context.Context, in ChatInput) (*ChatOutput, error)
}

// ChatInput is the chat tool's input.
type ChatInput struct {
	Message   string `json:"message" jsonschema:"what the user says to the coach"`
	SessionID string `json:"session_id,omitempty" jsonschema:"continue this session (sess_...); empty starts a new one"`
	Agent     string `json:"agent,omitempty" jsonschema:"the coach (agent name) for a new session; empty is the default coach"`
}

// ChatOutput is the chat tool's result.
type ChatOutput struct {
	SessionID  string `json:"session_id"`
	Text       string `json:"text"`
	StopReason string `json:"stop_reason"`
	// Interaction is the call the turn paused on (stop_reason
	// awaiting_input), for the client to show; the next message answers it.
	Interaction *ChatInteraction `json:"interaction,omitempty"`
	// Error says why a turn that replied in part ended early (the model
	// failed mid-reply, a contract was not met).
	Error *ChatError `json:"error,omitempty"`
}

// ChatError is why a chat turn ended early: a coachd error code and
// message.
type ChatError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ChatInteraction is a call waiting for the user: an interactive tool's
// (show_options: its input holds the choices) or one that needs the
// user's approval (Approval, Reason).
type ChatInteraction struct {
	ToolUseID string         `json:"tool_use_id"`
	Name      string         `json:"name"`
	Input     map[string]any `json:"input"`
	Approval  bool           `json:"approval,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	// ExpiresAt is when the call stops taking an answer.
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// ChatTool is the name of the tool that runs a turn.
const ChatTool = "chat"

// NewCoachServer returns an MCP server over b: the backend's tools, and
// chat. A tool's failure is an isError result the client's model reads.
func NewCoachServer(ctx context.Context, b Backend, log *slog.Logger) (*sdk.Server, error) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "coachd", Version: "1"}, &sdk.ServerOptions{Logger: log})
	specs, err := b.Tools(ctx)
	if err != nil {
		return nil, err
	}
	for _, spec := range specs {
		if spec.Name == ChatTool || !objectSchema(spec.InputSchema) {
			continue
		}
		name := spec.Name
		srv.AddTool(&sdk.Tool{Name: name, Description: spec.Description, InputSchema: spec.InputSchema},
			func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				session, ok := req.Params.Meta[MetaSession].(string)
				if v := req.Params.Meta[MetaSession]; v != nil && !ok {
					return textResult(name+": _meta "+MetaSession+" must be a session id string (sess_...); nothing was done", true), nil
				}
				res, err := b.Execute(ctx, name, req.Params.Arguments, session)
				if err != nil {
					return textResult(name+": "+coachd.ErrorMessage(err), true), nil
				}
				return textResult(res.Content, res.IsError), nil
			})
	}
	sdk.AddTool(srv, &sdk.Tool{Name: ChatTool, Description: "Send a message to a coach and get its reply. " +
		"Pass the returned session_id to continue the conversation."},
		func(ctx context.Context, _ *sdk.CallToolRequest, in ChatInput) (*sdk.CallToolResult, ChatOutput, error) {
			out, err := b.Chat(ctx, in)
			if err != nil {
				return textResult("chat: "+coachd.ErrorMessage(err), true), ChatOutput{}, nil
			}
			return nil, *out, nil
		})
	return srv, nil
}

// Handler serves coachd's MCP server over streamable HTTP, statelessly:
// every request builds its server for the backend of the request's
// (authenticated) user, so a session id can never carry one user's
// access into another's request.
func Handler(backend func(*http.Request) (Backend, error), log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		b, err := backend(r)
		if err != nil {
			log.Warn("mcp: no backend", "err", err)
			return nil
		}
		srv, err := NewCoachServer(r.Context(), b, log)
		if err != nil {
			log.Warn("mcp: list tools", "err", err)
			return nil
		}
		return srv
	}, &sdk.StreamableHTTPOptions{
		Stateless: true, JSONResponse: true, Logger: log,
		// Every request carries the user's key: a page that rebinds a
		// name to 127.0.0.1 has no key to send.
		DisableLocalhostProtection: true,
	})
	return h
}

func textResult(text string, isError bool) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
}

func objectSchema(raw json.RawMessage) bool {
	var m map[string]any
	return json.Unmarshal(raw, &m) == nil && m["type"] == "object"
}
