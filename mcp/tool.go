package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/coachd/coachd"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Request metadata keys: who a call is made for. They travel in the
// request's _meta, never in the arguments the model wrote.
const (
	MetaUser    = "coachd/user"
	MetaSession = "coachd/session"
)

// Tool is one tool of a mounted server, as a coachd.Tool: the runner
// validates its input against the server's inputSchema, runs it with the
// turn's timeout, and the result is capped at the server's max_output.
type Tool struct {
	srv    *Server
	remote string // the server's name for it
	def    coachd.ToolDef
}

// maxDescription bounds a server's tool description in the prompt.
const maxDescription = 2000

// maxSchema bounds a tool's inputSchema, sent (and paid for) with every
// model request of the turns that offer it; larger, the tool is skipped.
const maxSchema = 32 << 10

// maxListBytes bounds a server's tools as a whole (schemas and
// descriptions): 200 tools near maxSchema would make each model request
// megabytes larger, more than the model takes. Tools past it are skipped.
const maxListBytes = 256 << 10

func newTool(s *Server, t *sdk.Tool) (*Tool, error) {
	name := s.cfg.Prefix + Sep + t.Name
	if !ToolNameRe.MatchString(name) {
		return nil, fmt.Errorf("%q is not a valid tool name for the model (letters, digits, _ and -, at most 64)", name)
	}
	schema := json.RawMessage(`{"type":"object"}`)
	if t.InputSchema != nil {
		raw, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("inputSchema: %w", err)
		}
		if len(raw) > maxSchema {
			return nil, fmt.Errorf("inputSchema is %d bytes, more than %d", len(raw), maxSchema)
		}
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil || m["type"] != "object" {
			return nil, errors.New("inputSchema is not a JSON Schema of type object")
		}
		schema = raw
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = t.Title
	}
	if desc == "" {
		desc = "Tool " + t.Name + " of the " + s.cfg.Name + " MCP server."
	}
	return &Tool{srv: s, remote: t.Name, def: coachd.ToolDef{
		Name: name, Description: cut(desc, maxDescription), InputSchema: schema, Category: coachd.ToolInstant,
	}}, nil
}

// Definition describes the tool.
func (t *Tool) Definition() coachd.ToolDef { return t.def }

// Execute calls the tool on its server. The user and session go in the
// request's _meta. A server-side failure (isError), a server that does not
// answer in time and a server that crashed all become error results the
// model reads; a crashed server is restarted on the next call.
func (t *Tool) Execute(ctx context.Context, call coachd.ToolCall, env coachd.ToolEnv) (coachd.ToolResult, error) {
	s := t.srv
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	// Close (a pack's reload, coachd's shutdown) ends the call: the SDK
	// closes a connection only once its calls are done, and Close, and
	// the turn, waited for the call's whole timeout.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer context.AfterFunc(s.bg, func() { stop(errStopped) })()
	sess, err := s.session(ctx)
	if err != nil {
		return errResult("%s is unavailable: %v", t.def.Name, err), nil
	}
	meta := sdk.Meta{}
	if env.User != nil {
		meta[MetaUser] = env.User.ID
	}
	if env.Session != nil && env.Session.ID != "" {
		meta[MetaSession] = env.Session.ID
	}
	args := call.Input
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	start := time.Now()
	res, err := sess.CallTool(ctx, &sdk.CallToolParams{Meta: meta, Name: t.remote, Arguments: args})
	if err != nil {
		if errors.Is(context.Cause(ctx), errStopped) {
			s.log.Warn("mcp tool call ended: the server was stopped", "tool", t.def.Name)
			return errResult("%s was stopped while it ran: its MCP server was shut down or reloaded (the call may have run)", t.def.Name), nil
		}
		if ctx.Err() != nil {
			s.log.Warn("mcp tool timed out", "tool", t.def.Name, "after", time.Since(start).Round(time.Millisecond))
			return errResult("%s did not answer within %s", t.def.Name, time.Since(start).Round(time.Second)), nil
		}
		s.broken(sess, err)
		if frameTooLarge(err) {
			s.log.Warn("mcp tool call failed", "tool", t.def.Name, "err", err)
			return errResult("%s failed: the MCP server's answer is larger than %d bytes", t.def.Name, sdk.DefaultMaxLineLength), nil
		}
		err = s.redact(err)
		s.log.Warn("mcp tool call failed", "tool", t.def.Name, "err", err)
		return errResult("%s failed: %s", t.def.Name, truncate(err.Error(), 300)), nil
	}
	s.succeeded()
	return coachd.ToolResult{Content: resultText(res, s.cfg.MaxOutput, s.hide), IsError: res.IsError}, nil
}

// errStopped ends the calls under way when their server is closed.
var errStopped = errors.New("the MCP server was stopped")

func errResult(format string, args ...any) coachd.ToolResult {
	return coachd.ToolResult{Content: fmt.Sprintf(format, args...), IsError: true}
}

// resultText renders a result's content as the text the model reads,
// capped at max bytes, with hide's secrets hidden (before the cut: half
// a token must not show). Text is kept; structured content stands in for
// empty text; images, audio and resources are named, not inlined.
func resultText(res *sdk.CallToolResult, max int, hide *strings.Replacer) string {
	var sb strings.Builder
	add := func(s string) {
		if sb.Len() > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(s)
	}
	for _, c := range res.Content {
		if sb.Len() > max {
			break
		}
		switch c := c.(type) {
		case *sdk.TextContent:
			add(c.Text)
		case *sdk.ImageContent:
			add(fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			add(fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			add(fmt.Sprintf("[resource %s: %s]", c.Name, c.URI))
		case *sdk.EmbeddedResource:
			if r := c.Resource; r != nil && r.Text != "" {
				add(r.Text)
			} else if r != nil {
				add(fmt.Sprintf("[resource %s, not shown]", r.URI))
			}
		default:
			add("[content not shown]")
		}
	}
	if sb.Len() == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			sb.Write(b)
		}
	}
	return capText(hide.Replace(sb.String()), max)
}

// capText cuts s to at most max bytes (on a character boundary) and says
// so at the end.
func capText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	note := fmt.Sprintf("\n[truncated: the result was %d bytes; the first %d are shown]", len(s), max)
	return cut(s, max-len(note)) + note
}

// cut returns at most n bytes of s, ending on a character boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
