package agent

import (
	"log/slog"
	"slices"
	"strings"

	"github.com/coachd/coachd"
)

// mcpStarts is an MCP server that counts its starts.
type mcpStarts interface{ Starts() int }

// unofferedKey is one warning: an agent's literal allow, deny or
// approval name under one start of its server.
type unofferedKey struct {
	agent  *Agent
	server string
	starts int
	list   string
	name   string
}

// warnUnoffered logs each literal name of the agent's mcp.allow,
// mcp.deny and requires_approval that the server it names (by prefix) did
// not list: such a name matches nothing (a rule so written gates no call),
// and only the server's list can tell. Once per server
// start: it runs only when a list is new to the turn cache, and remembers
// what it said.
func (c *mcpCache) warnUnoffered(log *slog.Logger, ag *Agent, lists [][]coachd.Tool) {
	var gated []string
	for _, r := range ag.Approvals {
		gated = append(gated, r.Tool)
	}
	for key, names := range map[string][]string{"mcp.allow": ag.MCP.Allow, "mcp.deny": ag.MCP.Deny, "requires_approval": gated} {
		for _, name := range names {
			if strings.ContainsAny(name, "*?[\\") {
				continue
			}
			for i, srv := range ag.MCP.Servers {
				ps, ok := srv.(mcpPrefixed)
				if !ok || lists[i] == nil || !strings.HasPrefix(name, ps.Prefix()+"__") ||
					slices.ContainsFunc(lists[i], func(t coachd.Tool) bool { return t.Definition().Name == name }) {
					continue
				}
				k := unofferedKey{agent: ag, server: srv.Name(), list: key, name: name}
				if st, ok := srv.(mcpStarts); ok {
					k.starts = st.Starts()
				}
				if c.markWarned(k) {
					log.Warn(key+": the MCP server offers no such tool; the name matches nothing",
						"agent", ag.Name, "server", srv.Name(), "tool", name)
				}
			}
		}
	}
}

// markWarned records k, reporting whether it is new.
func (c *mcpCache) markWarned(k unofferedKey) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warned[k] {
		return false
	}
	if c.warned == nil || len(c.warned) > 1000 {
		c.warned = map[unofferedKey]bool{}
	}
	c.warned[k] = true
	return true
}
