package anthropic

import (
	"bytes"
	"encoding/json"
	"sync"

	"github.com/coachd/coachd"
)

// toolCache keeps each tool definition's JSON, as toolJSON writes it: an
// agent sends the same tools, with the same schemas, on every request, and
// json.Marshal of a schema (compacting and escaping it) was a good part of
// encoding one. An entry is used only while the spec is equal to the one
// it was made from (a copy of the schema is kept for that: the caller's
// bytes may change under it), so a changed tool is encoded afresh.
type toolCache struct {
	mu sync.RWMutex
	m  map[toolKey]*toolEntry
}

// toolKey: agents of one pack may give a tool of the same name their own
// description; each keeps its entry.
type toolKey struct{ name, desc string }

type toolEntry struct {
	schema []byte // a private copy
	json   []byte
}

// maxCachedTools bounds the cache (tools come from packs and MCP servers,
// a few hundred names at most); a full cache starts over, so tools whose
// descriptions keep changing cannot hold the slots for good.
const maxCachedTools = 4096

// json returns t's definition JSON; the caller must not change it.
func (c *toolCache) json(t *coachd.ToolSpec) ([]byte, error) {
	k := toolKey{t.Name, t.Description}
	c.mu.RLock()
	e := c.m[k]
	c.mu.RUnlock()
	if e != nil && bytes.Equal(e.schema, t.InputSchema) {
		return e.json, nil
	}
	raw, err := toolJSON(*t)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil {
		c.m = map[toolKey]*toolEntry{}
	}
	if _, ok := c.m[k]; !ok && len(c.m) >= maxCachedTools {
		clear(c.m)
	}
	c.m[k] = &toolEntry{schema: bytes.Clone(t.InputSchema), json: raw}
	c.mu.Unlock()
	return raw, nil
}

// toolJSON is a tool definition as the Messages API takes it.
func toolJSON(t coachd.ToolSpec) ([]byte, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	raw, err := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"input_schema"`
	}{t.Name, t.Description, schema})
	if err != nil {
		return nil, coachd.Errorf(coachd.EINVALID, "tool %q: %v", t.Name, err)
	}
	return raw, nil
}
