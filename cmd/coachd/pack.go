package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/datasource"
	"github.com/coachd/coachd/mcp"
	"github.com/coachd/coachd/review"
	"github.com/coachd/coachd/tools"
)

const packUsage = `Usage:
  coachd pack validate DIR   check a coach pack and print every problem (file:line)
  coachd pack list DIR       list a pack's agents, skills and tools
`

// runPack is "coachd pack validate|list DIR".
func runPack(_ context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" || (a == "help" && len(args) == 1) {
			fmt.Fprint(stdout, packUsage)
			return nil
		}
	}
	if len(args) != 2 || (args[0] != "validate" && args[0] != "list") {
		fmt.Fprint(stderr, packUsage)
		return errUsage
	}
	p, err := loadPack(args[1], getenv, getenv("COACHD_WEBHOOK_ALLOW"), getenv("COACHD_WEBHOOK_SECRET"))
	if err != nil {
		var pe *agent.PackError
		if errors.As(err, &pe) {
			for _, pr := range pe.Problems {
				fmt.Fprintln(stdout, pr)
			}
			return fmt.Errorf("%s: %d problem(s)", args[1], len(pe.Problems))
		}
		return err
	}
	defer p.Close()
	if args[0] == "validate" {
		servers := ""
		if len(p.MCP) > 0 {
			servers = fmt.Sprintf(", %d MCP servers", len(p.MCP))
		}
		fmt.Fprintf(stdout, "%s: ok (%d agents, %d skills, %d pack tools%s)\n", args[1], len(p.Agents), len(p.Skills), len(p.Tools), servers)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENTS")
	for _, a := range p.Agents {
		def := ""
		if a == p.Default() {
			def = " (default)"
		}
		fmt.Fprintf(tw, "  %s%s\t%s\ttools: %s\n", a.Name, def, a.Description, strings.Join(a.Tools, ", "))
	}
	fmt.Fprintln(tw, "SKILLS")
	for _, s := range p.Skills {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.Summary)
	}
	fmt.Fprintln(tw, "TOOLS")
	for _, t := range p.Tools {
		fmt.Fprintf(tw, "  %s\t%s\n", t.Definition().Name, t.Definition().Description)
	}
	if len(p.MCP) > 0 {
		// Their tools are known once they run: listing does not start them.
		fmt.Fprintln(tw, "MCP SERVERS")
		for _, s := range p.MCP {
			var users []string
			for _, a := range p.Agents {
				if a.MCP != nil && slices.Contains(a.MCP.Servers, s) {
					users = append(users, a.Name)
				}
			}
			fmt.Fprintf(tw, "  %s\tagents: %s\n", s.Name(), strings.Join(users, ", "))
		}
	}
	return tw.Flush()
}

// loadPack reads and validates the pack in dir, with webhook tools whose
// ${ENV} secrets come from getenv.
// allow is the operator's webhook address policy (--webhook-allow), secret
// the key that signs webhook calls (--webhook-secret; "" leaves them
// unsigned unless a tool has its own).
func loadPack(dir string, getenv func(string) string, allow, secret string) (*agent.Pack, error) {
	return loadPackLogged(dir, getenv, allow, secret, slog.New(slog.DiscardHandler))
}

// loadPackLogged is loadPack whose MCP servers log to logger (their
// starts, crashes and stderr).
func loadPackLogged(dir string, getenv func(string) string, allow, secret string, logger *slog.Logger) (*agent.Pack, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	policy, err := tools.ParseAddrPolicy(allow)
	if err != nil {
		return nil, fmt.Errorf("--webhook-allow: %v", err)
	}
	var key tools.WebhookSecret
	if secret != "" {
		if key, err = tools.ParseWebhookSecret(secret); err != nil {
			return nil, fmt.Errorf("--webhook-secret: %v", err)
		}
	}
	return agent.LoadPack(dir, agent.PackOptions{
		Builtins: append(tools.Builtins(), review.Unbound()...),
		LoadTool: func(path string, data []byte) (coachd.Tool, error) {
			w, err := tools.ParseWebhook(path, data, getenv, policy)
			if err != nil {
				return nil, err
			}
			w.UseSecret(key)
			return w, nil
		},
		LoadMCP: func(path string, data []byte) (agent.MCPServer, error) {
			c, err := mcp.ParseConfig(path, data, getenv)
			if err != nil {
				return nil, err
			}
			c.Dir = abs
			if err := c.CheckCommand(); err != nil {
				return nil, err
			}
			opts := mcp.Options{Logger: logger.With("component", "mcp")}
			if c.URL != "" {
				// The webhooks' address policy: a pack reaches only what
				// the operator allows (--webhook-allow).
				if u, err := url.Parse(c.URL); err == nil {
					if err := policy.CheckURLHost(u.Hostname()); err != nil {
						return nil, fmt.Errorf("%s: url: %v", path, err)
					}
				}
				opts.HTTPClient = policy.Client()
			}
			return mcp.NewServer(c, opts), nil
		},
		LoadData: func(dir string, paths []string) (agent.Data, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			return datasource.Load(ctx, dir, paths, getenv, nil)
		},
	})
}

// checkUserKeys refuses data sources that key users by name when users
// come from an identity provider: a token's user picks that name (its
// name claim), so one could take a name the app's rows belong to and read
// them. A source keyed by subject without one links no user: a warning.
func checkUserKeys(p *agent.Pack, jwt bool, logger *slog.Logger) error {
	set, ok := p.Data.(interface{ UserKeys() map[string]string })
	if !ok {
		return nil
	}
	for name, key := range set.UserKeys() {
		switch {
		case key == "name" && jwt:
			return fmt.Errorf("data source %s keys users by name (user_key: name), which a token's user chooses with --jwt-jwks-url: use user_key: subject (the token's sub)", name)
		case key == "subject" && !jwt:
			logger.Warn("data source keys users by subject but --jwt-jwks-url is off: no user is linked to its rows", "data_source", name)
		}
	}
	return nil
}

// packTools is the tool set of a pack: the built-ins configured by its
// policy, and its own tools.
func packTools(p *agent.Pack) (*agent.Toolset, error) {
	if p == nil {
		return agent.NewToolset(tools.Builtins()...)
	}
	ts := append(tools.ForPack(p, p.FileTypes()), review.Unbound()...)
	return agent.NewToolset(append(ts, p.Tools...)...)
}
