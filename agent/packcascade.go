package agent

import (
	"context"
	"fmt"

	"github.com/coachd/coachd"
	"gopkg.in/yaml.v3"
)

// unloaded stands in, while a pack loads, for a tool whose file failed to
// load (tools/<name>.yaml, or a data file's query_data, queries and
// actions): agents naming it are not told it is unknown, so the report
// names the one cause, the file's own problem. It never reaches a Pack:
// that file's problem fails the load.
type unloaded struct{ name, file string }

func (u unloaded) Definition() coachd.ToolDef { return coachd.ToolDef{Name: u.name} }

func (u unloaded) Execute(context.Context, coachd.ToolCall, coachd.ToolEnv) (coachd.ToolResult, error) {
	return coachd.ToolResult{}, fmt.Errorf("tool %s: %s failed to load", u.name, u.file)
}

// markUnloaded stands name in for a tool file that failed to load.
func markUnloaded(known map[string]coachd.Tool, name, file string) {
	if known[name] == nil {
		known[name] = unloaded{name, file}
	}
}

// markUnloadedData stands in the tools the data files at paths would have
// provided had they loaded: query_data and each file's named queries and
// actions. file names a path as problems do; read reads one.
func markUnloadedData(known map[string]coachd.Tool, paths []string, file func(string) string, read func(string) ([]byte, error)) {
	for _, p := range paths {
		markUnloaded(known, "query_data", file(p))
		b, err := read(p) // bounded: it may be why the file failed
		if err != nil {
			continue
		}
		var f struct {
			Queries map[string]yaml.Node `yaml:"queries"`
			Actions map[string]yaml.Node `yaml:"actions"`
		}
		if yaml.Unmarshal(b, &f) != nil {
			continue
		}
		for name := range f.Queries {
			markUnloaded(known, name, file(p))
		}
		for name := range f.Actions {
			markUnloaded(known, name, file(p))
		}
	}
}

// unloadedMCP stands in, while a pack loads, for an MCP server whose file
// (mcp/<name>.yaml) failed to load: agents naming it are not told it is
// unknown. It has no prefix, so their allow, deny and requires_approval
// rules are not judged against the servers that did load. It never
// reaches a Pack: the file's own problem fails the load.
type unloadedMCP struct{ name, file string }

func (u unloadedMCP) Name() string { return u.name }

func (u unloadedMCP) Tools(context.Context) ([]coachd.Tool, error) {
	return nil, fmt.Errorf("MCP server %s: %s failed to load", u.name, u.file)
}

func (unloadedMCP) Close() error { return nil }

// markUnloadedMCP stands name in for an MCP server file that failed to load.
func markUnloadedMCP(servers map[string]MCPServer, name, file string) {
	if servers[name] == nil {
		servers[name] = unloadedMCP{name, file}
	}
}
