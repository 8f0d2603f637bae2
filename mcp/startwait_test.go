package mcp

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/tools"
)

// TestStartWait: a stdio server that answers its listing after 3 s is in
// the first turn's tools when its file says start_wait: 5s, and left out
// with the default 2 s wait.
func TestStartWait(t *testing.T) {
	first := func(t *testing.T, extra string) []string {
		dir := writePack(t, map[string]string{
			"mcp/slow.yaml":   "name: slow\ncommand: ${FAKE_BIN}\nenv: {COACHD_MCP_FAKE: stdio, COACHD_MCP_FAKE_DELAY: 3s}\ntimeout: 10s\n" + extra,
			"agents/coach.md": "---\nname: coach\ndescription: A coach.\ntools: [save_note]\nmcp:\n  servers: [slow]\n---\nYou coach.\n",
		})
		pack, err := agent.LoadPack(dir, agent.PackOptions{Builtins: tools.Builtins(),
			LoadMCP: func(path string, data []byte) (agent.MCPServer, error) {
				c, err := ParseConfig(path, data, func(k string) string { return os.Args[0] })
				if err != nil {
					return nil, err
				}
				c.Dir = dir
				return NewServer(c, Options{}), nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { pack.Close() })
		// What the first turn of the agent offers: the pack's server tools.
		list, _ := pack.MCP[0].Tools(context.Background())
		var names []string
		for _, tl := range list {
			names = append(names, tl.Definition().Name)
		}
		return names
	}
	t.Run("OK", func(t *testing.T) {
		if got := first(t, "start_wait: 5s\n"); !slices.Contains(got, "slow__echo") {
			t.Errorf("first turn's tools = %v, want slow__echo", got)
		}
	})
	t.Run("Default", func(t *testing.T) {
		if got := first(t, ""); len(got) != 0 {
			t.Errorf("first turn's tools = %v, want none within the default 2 s", got)
		}
	})
	t.Run("ErrBad", func(t *testing.T) {
		for _, v := range []string{"soon", "0s", "-1s", "11s", "2m"} {
			_, err := ParseConfig("mcp/slow.yaml", []byte("name: slow\ncommand: x\ntimeout: 10s\nstart_wait: "+v+"\n"), func(string) string { return "" })
			if err == nil || !strings.Contains(err.Error(), "mcp/slow.yaml:4: start_wait") {
				t.Errorf("start_wait %s: err = %v, want a problem at mcp/slow.yaml:4", v, err)
			}
		}
	})
}
