package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strings"

	"github.com/coachd/coachd/mcp"
)

// runMCP is "coachd mcp": coachd as an MCP server over stdio, for desktop
// clients (Claude Desktop, IDEs). It bridges to a running coachd's
// /v1/mcp endpoint with the user's key, so the tools are the server's own:
// the agent's notes and files tools, and chat.
func runMCP(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("mcp", "Usage: coachd mcp [flags]\n\n"+
		"Serves a user's notes, files and coaches to an MCP client over stdio (JSON-RPC on\n"+
		"stdin/stdout), through a running coachd. The same tools are served over streamable\n"+
		"HTTP at POST /v1/mcp (Authorization: Bearer <key>) by coachd serve.")
	base := fs.String("url", envOr(getenv, "COACHD_URL", "http://127.0.0.1:8080"), "server URL (env COACHD_URL)")
	key := new(string)
	secretVar(fs, key, "key", getenv("COACHD_KEY"), "your API `key`, ck_… (env COACHD_KEY)")
	agentName := fs.String("agent", "", "the agent whose tools are served and who answers chat (default: the pack's default)")
	if done, err := parseFlags(fs, args, stdout, stderr); done || err != nil {
		return err
	}
	if *key == "" {
		fmt.Fprintln(stderr, "coachd mcp: --key (or COACHD_KEY) is required")
		return errUsage
	}
	u, err := url.Parse(strings.TrimRight(*base, "/") + "/v1/mcp")
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintln(stderr, "coachd mcp: --url must be an http or https URL")
		return errUsage
	}
	if *agentName != "" {
		u.RawQuery = url.Values{"agent": {*agentName}}.Encode()
	}
	if err := mcp.Bridge(ctx, u.String(), *key, mcp.StdioTransport(stdin, stdout), nil, slog.New(slog.NewTextHandler(stderr, nil))); err != nil && ctx.Err() == nil {
		return fmt.Errorf("coachd mcp: %w", err)
	}
	return nil
}
