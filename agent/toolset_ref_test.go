package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestToolsetRefusesOutsideRefs: a tool's schema comes from a pack file
// or from an MCP server, which may be a third party's. A $ref to a file:
// URL must not make coachd open a path of its own machine (a secret
// JSON file, a FIFO or /dev/stdin that blocks the turn forever): the
// tool is refused, as any schema that does not compile.
func TestToolsetRefusesOutsideRefs(t *testing.T) {
	local := filepath.Join(t.TempDir(), "local.json")
	if err := os.WriteFile(local, []byte(`{"type":"string"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object","properties":{"x":{"$ref":"file://` + filepath.ToSlash(local) + `"}}}`
	ts, err := NewToolset(schemaTool{schema})
	if err == nil {
		verdict := ts.ValidateInput("t", json.RawMessage(`{"x":5}`))
		t.Fatalf("a schema with a file: $ref compiled (validating {\"x\":5} against the local file gives %v); want it refused", verdict)
	}
}
