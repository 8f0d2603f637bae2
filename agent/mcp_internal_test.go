package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/mcp"
)

// listServer is an MCPServer whose tool list a test sets.
type listServer struct{ list []coachd.Tool }

func (s *listServer) Name() string                                 { return "srv" }
func (s *listServer) Tools(context.Context) ([]coachd.Tool, error) { return s.list, nil }
func (s *listServer) Close() error                                 { return nil }

type namedTool string

func (n namedTool) Definition() coachd.ToolDef {
	return coachd.ToolDef{Name: string(n), Description: "d", Category: coachd.ToolInstant,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","maxLength":50}},"required":["q"]}`)}
}

func (n namedTool) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	return coachd.ToolResult{Content: string(n)}, nil
}

func mcpTools(n int) []coachd.Tool {
	out := make([]coachd.Tool, n)
	for i := range out {
		out[i] = namedTool(fmt.Sprintf("srv__t%d", i))
	}
	return out
}

// TestWithMCPCache: a turn reuses the tool set built for the same lists,
// and builds a new one when a server's list changes.
func TestWithMCPCache(t *testing.T) {
	srv := &listServer{list: mcpTools(3)}
	ag := &Agent{Name: "a", Tools: []string{}, MCP: &MCPAccess{Servers: []MCPServer{srv}, Deny: []string{"srv__t2"}}}
	base, _ := NewToolset()
	r := NewRunner(Config{Tools: base})
	a1, ts1 := r.withMCP(context.Background(), ag, base)
	if got := fmt.Sprint(a1.Tools); got != "[srv__t0 srv__t1]" {
		t.Fatalf("tools = %s", got)
	}
	if len(ag.Tools) != 0 {
		t.Fatalf("the pack's agent was changed: %v", ag.Tools)
	}
	a2, ts2 := r.withMCP(context.Background(), ag, base)
	if a2 != a1 || ts2 != ts1 {
		t.Error("the same lists built a new tool set")
	}
	srv.list = mcpTools(4)
	a3, ts3 := r.withMCP(context.Background(), ag, base)
	if ts3 == ts1 || fmt.Sprint(a3.Tools) != "[srv__t0 srv__t1 srv__t3]" {
		t.Errorf("after the list changed: %v", a3.Tools)
	}
}

// BenchmarkWithMCP is what a turn pays for an agent's MCP tools once the
// server runs: Cached is every turn, Rebuild a turn after the list
// changed (schemas compiled).
func BenchmarkWithMCP(b *testing.B) {
	srv := &listServer{list: mcpTools(8)}
	ag := &Agent{Name: "a", MCP: &MCPAccess{Servers: []MCPServer{srv}}}
	base, _ := NewToolset()
	b.Run("Cached", func(b *testing.B) {
		r := NewRunner(Config{Tools: base})
		for b.Loop() {
			r.withMCP(context.Background(), ag, base)
		}
	})
	b.Run("Rebuild", func(b *testing.B) {
		r := NewRunner(Config{Tools: base})
		for b.Loop() {
			r.bindMCPTools(ag, base, [][]coachd.Tool{srv.list})
		}
	})
}

// TestMCPListTimeoutCoversStartWait: a turn's guard on listing its MCP
// tools must not cut a server's own start_wait short (a pack may give a
// slow-starting server up to mcp.MaxStartWait); each server bounds its
// wait itself, so a hung one costs its start_wait, not the guard.
func TestMCPListTimeoutCoversStartWait(t *testing.T) {
	if mcpListTimeout < mcp.MaxStartWait {
		t.Fatalf("the turn's listing guard (%s) is shorter than the longest start_wait (%s)", mcpListTimeout, mcp.MaxStartWait)
	}
}
