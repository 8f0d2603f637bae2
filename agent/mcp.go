package agent

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coachd/coachd"
	"gopkg.in/yaml.v3"
)

// MCPServer is a pack's MCP server (mcp/<name>.yaml). Its tools are known
// only once it runs, so an agent names servers (its mcp: key) and each
// turn asks them for their tools; a server starts on first use.
type MCPServer interface {
	Name() string
	// Tools lists the server's tools, named <prefix>__<tool>.
	Tools(ctx context.Context) ([]coachd.Tool, error)
	Close() error
}

// MCPAccess is what an agent may use of the pack's MCP servers.
type MCPAccess struct {
	Servers []MCPServer
	// Allow and Deny filter tools by their full name (<prefix>__<tool>),
	// as names or path.Match patterns ("files__read_*"); an empty Allow
	// allows every tool Deny does not name.
	Allow, Deny []string
}

// mcpFile is an agent file's mcp: key.
type mcpFile struct {
	Servers []string `yaml:"servers"`
	Allow   []string `yaml:"allow"`
	Deny    []string `yaml:"deny"`
}

var mcpKeys = yamlKeys(mcpFile{})

// bindMCP resolves an agent's mcp: key against the pack's servers.
func bindMCP(fm *frontMatter, a *Agent, f *mcpFile, servers map[string]MCPServer) {
	if f == nil {
		return
	}
	fm.checkKeys(fm.node("mcp"), mcpKeys)
	acc := &MCPAccess{Allow: f.Allow, Deny: f.Deny}
	for i, name := range f.Servers {
		srv := servers[name]
		switch {
		case srv == nil:
			fm.bad(fm.itemLine(i, "mcp", "servers"), fmt.Sprintf("unknown MCP server %q (no mcp/%s.yaml)", name, name))
		case slices.Index(f.Servers, name) != i:
			fm.bad(fm.itemLine(i, "mcp", "servers"), fmt.Sprintf("MCP server %q listed twice", name))
		default:
			acc.Servers = append(acc.Servers, srv)
		}
	}
	if len(f.Servers) == 0 {
		fm.bad(fm.line("mcp"), "mcp needs servers: the names of the pack's mcp/<name>.yaml files")
	}
	for key, list := range map[string][]string{"allow": f.Allow, "deny": f.Deny} {
		for i, p := range list {
			if _, err := path.Match(p, ""); err != nil || p == "" || len(p) > 128 {
				fm.bad(fm.itemLine(i, "mcp", key), fmt.Sprintf("mcp.%s: %q is not a tool name or pattern", key, p))
			} else if !strings.Contains(p, "__") && !strings.ContainsAny(p, "*?[\\") {
				// A server's own name for a tool: it matches nothing, and
				// a deny so written hides nothing.
				fm.bad(fm.itemLine(i, "mcp", key), fmt.Sprintf("mcp.%s: %q names no tool: MCP tools are named <prefix>__<tool> (%s)", key, p, prefixed(p, acc.Servers)))
			} else if want, ok := unknownPrefix(p, acc.Servers); !ok {
				fm.bad(fm.itemLine(i, "mcp", key), fmt.Sprintf("mcp.%s: %q names no tool of the agent's MCP servers (their tools are named %s)", key, p, want))
			}
		}
	}
	a.MCP = acc
	checkApprovalPrefixes(fm, a, servers)
}

// mcpPrefixed is an MCP server that says the prefix of its tools' names
// (the server's name with _ as -, unless its file sets one).
type mcpPrefixed interface{ Prefix() string }

// unknownPrefix checks a name or pattern of MCP tools, <prefix>__<tool>:
// a literal prefix must be one of the servers'. want names their tools.
func unknownPrefix(p string, servers []MCPServer) (want string, ok bool) {
	prefix, _, found := strings.Cut(p, "__")
	if !found || strings.ContainsAny(prefix, "*?[\\") {
		return "", true
	}
	var names []string
	for _, srv := range servers {
		ps, isP := srv.(mcpPrefixed)
		if !isP || ps.Prefix() == prefix {
			return "", true
		}
		names = append(names, ps.Prefix()+"__<tool>")
	}
	if len(names) == 0 {
		return "", true
	}
	return strings.Join(names, ", "), false
}

// checkApprovalPrefixes reports the requires_approval rules that name MCP
// tools (taken as written when the pack loads) under a prefix none of the
// pack's servers has: such a rule would never match, and the calls it
// meant to gate would run unasked.
func checkApprovalPrefixes(fm *frontMatter, a *Agent, servers map[string]MCPServer) {
	n := fm.node("requires_approval")
	if n == nil || n.Kind != yaml.SequenceNode {
		return
	}
	all := make([]MCPServer, 0, len(servers))
	for _, name := range slices.Sorted(maps.Keys(servers)) {
		all = append(all, servers[name])
	}
	for _, item := range n.Content {
		name := item.Value
		if item.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(item.Content); i += 2 {
				if item.Content[i].Value == "tool" {
					name = item.Content[i+1].Value
				}
			}
		}
		name = strings.TrimSpace(name)
		if slices.Contains(a.Tools, name) {
			continue
		}
		if want, ok := unknownPrefix(name, all); !ok {
			fm.bad(item.Line+fm.off, fmt.Sprintf("requires_approval: %q names no tool of the pack's MCP servers (their tools are named %s)", name, want))
		}
	}
}

func (acc *MCPAccess) allowed(name string) bool {
	match := func(list []string) bool {
		for _, p := range list {
			if ok, _ := path.Match(p, name); ok {
				return true
			}
		}
		return false
	}
	return (len(acc.Allow) == 0 || match(acc.Allow)) && !match(acc.Deny)
}

// mcpListTimeout is the last guard on listing an agent's MCP tools
// before a turn. Each server bounds its own wait (its start_wait, 2 s by
// default, at most a minute: a server that does not start by then is left
// out of the turn), so the guard must not cut a longer start_wait short.
const mcpListTimeout = time.Minute

// withMCP returns the agent and tool set of a turn with the tools of the
// agent's MCP servers added. A server that cannot list its tools is
// logged and left out: the turn goes on with the tools it has. The
// servers are asked at once, so slow ones cost one wait, not one each.
func (r *Runner) withMCP(ctx context.Context, ag *Agent, ts *Toolset) (*Agent, *Toolset) {
	if ag.MCP == nil || len(ag.MCP.Servers) == 0 {
		return ag, ts
	}
	ctx, cancel := context.WithTimeout(ctx, mcpListTimeout)
	defer cancel()
	lists := make([][]coachd.Tool, len(ag.MCP.Servers))
	var wg sync.WaitGroup
	for i, srv := range ag.MCP.Servers {
		wg.Go(func() {
			list, err := srv.Tools(ctx)
			if err != nil {
				r.cfg.Logger.Warn("mcp server left out of the turn", "agent", ag.Name, "server", srv.Name(), "err", err)
				return
			}
			lists[i] = list
		})
	}
	wg.Wait()
	if a, t, ok := r.mcp.get(ag, ts, lists); ok {
		return a, t
	}
	a, t := r.bindMCPTools(ag, ts, lists)
	r.mcp.put(ag, ts, lists, a, t)
	return a, t
}

// bindMCPTools adds the listed tools the agent allows to its turn.
func (r *Runner) bindMCPTools(ag *Agent, ts *Toolset, lists [][]coachd.Tool) (*Agent, *Toolset) {
	r.mcp.warnUnoffered(r.cfg.Logger, ag, lists)
	var add []coachd.Tool
	names := slices.Clip(ag.Tools)
	for _, list := range lists {
		for _, t := range list {
			name := t.Definition().Name
			if !ag.MCP.allowed(name) {
				continue
			}
			if _, taken := ts.Get(name); taken || slices.Contains(names, name) {
				r.cfg.Logger.Warn("mcp tool skipped: the name is taken", "agent", ag.Name, "tool", name)
				continue
			}
			add = append(add, t)
			names = append(names, name)
		}
	}
	if len(add) == 0 {
		return ag, ts
	}
	out, err := ts.With(add...)
	if err != nil {
		// One bad schema must not hide the others: add them one by one.
		out = ts
		names = slices.Clip(ag.Tools)
		for _, t := range add {
			next, err := out.With(t)
			if err != nil {
				r.cfg.Logger.Warn("mcp tool skipped", "agent", ag.Name, "tool", t.Definition().Name, "err", err)
				continue
			}
			out, names = next, append(names, t.Definition().Name)
		}
	}
	cp := *ag
	cp.Tools = names
	return &cp, out
}

// mcpCache keeps, per agent and base tool set, the turn's agent and tool
// set built from its servers' lists: compiling the tools' schemas again
// each turn would cost about a millisecond per turn for nothing. An entry
// holds while every server answers with the same list (a server keeps its
// list until it restarts or the list changes).
type mcpCache struct {
	mu     sync.Mutex
	m      map[mcpKey]mcpEntry
	warned map[unofferedKey]bool // see warnUnoffered
}

type mcpKey struct {
	agent *Agent
	tools *Toolset
}

type mcpEntry struct {
	lists []*coachd.Tool // each list's first element (nil: empty), with lens
	lens  []int
	agent *Agent
	tools *Toolset
}

func listIDs(lists [][]coachd.Tool) ([]*coachd.Tool, []int) {
	ids, lens := make([]*coachd.Tool, len(lists)), make([]int, len(lists))
	for i, l := range lists {
		if len(l) > 0 {
			ids[i] = &l[0]
		}
		lens[i] = len(l)
	}
	return ids, lens
}

func (c *mcpCache) get(ag *Agent, ts *Toolset, lists [][]coachd.Tool) (*Agent, *Toolset, bool) {
	ids, lens := listIDs(lists)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[mcpKey{ag, ts}]
	if !ok || !slices.Equal(e.lists, ids) || !slices.Equal(e.lens, lens) {
		return nil, nil, false
	}
	return e.agent, e.tools, true
}

func (c *mcpCache) put(ag *Agent, ts *Toolset, lists [][]coachd.Tool, a *Agent, t *Toolset) {
	ids, lens := listIDs(lists)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) > 1000 {
		c.m = map[mcpKey]mcpEntry{} // bound tool sets (reviews) make new keys: start over
	}
	c.m[mcpKey{ag, ts}] = mcpEntry{lists: ids, lens: lens, agent: a, tools: t}
}

// prefixed is tool under each of the servers' prefixes, for a message.
func prefixed(tool string, servers []MCPServer) string {
	var names []string
	for _, srv := range servers {
		if ps, ok := srv.(mcpPrefixed); ok {
			names = append(names, ps.Prefix()+"__"+tool)
		}
	}
	if len(names) == 0 {
		return "<prefix>__" + tool
	}
	return strings.Join(names, ", ")
}
