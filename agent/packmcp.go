package agent

import (
	"fmt"
	"path/filepath"
	"strings"
)

// loadMCP builds the pack's MCP servers from files (mcp/*.yaml), by name.
func loadMCP(files []string, load func(string, []byte) (MCPServer, error), read func(string) (string, []byte, bool),
	problem func(file string, line int, msg string)) map[string]MCPServer {
	out := map[string]MCPServer{}
	prefixes := map[string]string{} // prefix → file
	for _, path := range files {
		file, data, ok := read(path)
		base := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
		if !ok {
			markUnloadedMCP(out, base, file)
			continue
		}
		if load == nil {
			problem(file, 0, "MCP servers are not supported here")
			continue
		}
		s, err := load(file, data)
		if err != nil {
			loaderProblems(file, err, problem)
			markUnloadedMCP(out, base, file)
			continue
		}
		if _, failed := out[s.Name()].(unloadedMCP); !failed && out[s.Name()] != nil {
			problem(file, yamlLine(data, "name"), fmt.Sprintf("MCP server %q is defined twice", s.Name()))
			s.Close()
			continue
		}
		if ps, ok := s.(mcpPrefixed); ok {
			if other := prefixes[ps.Prefix()]; other != "" {
				line := yamlLine(data, "prefix")
				if line == 0 {
					line = yamlLine(data, "name")
				}
				problem(file, line, fmt.Sprintf("prefix %q is also %s's: the two servers' tools would share names (set another prefix)", ps.Prefix(), other))
			} else {
				prefixes[ps.Prefix()] = file
			}
		}
		out[s.Name()] = s
	}
	return out
}
