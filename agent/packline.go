package agent

import (
	"errors"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"gopkg.in/yaml.v3"
)

// yamlLine is the line, in a pack file's YAML, of the node at path (keys
// of mappings, indexes of sequences): of the deepest node found on the
// way, 0 when the file has not even path's first key.
func yamlLine(data []byte, path ...string) int {
	var doc yaml.Node
	if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return 0
	}
	n, line := doc.Content[0], 0
	for _, key := range path {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					line, next = n.Content[i].Line, n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			if i, err := strconv.Atoi(key); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			break
		}
		n = next
	}
	return line
}

// schemaProblem renders a tool's schema error as one line, and returns
// where in the schema its first complaint is.
func schemaProblem(err error) (string, []string) {
	var sve *jsonschema.SchemaValidationError
	ve, ok := (*jsonschema.ValidationError)(nil), errors.As(err, &sve)
	if ok {
		ve, ok = sve.Err.(*jsonschema.ValidationError)
	}
	if !ok {
		msg := err.Error()
		if _, rest, found := strings.Cut(msg, ": schema: "); found {
			msg = rest
		}
		return "input_schema: " + strings.Join(strings.Fields(msg), " "), nil
	}
	var parts []string
	var loc []string
	leaves(ve, func(e *jsonschema.ValidationError) {
		if loc == nil {
			loc = e.InstanceLocation
		}
		parts = append(parts, "at /"+strings.Join(e.InstanceLocation, "/")+": "+e.ErrorKind.LocalizedString(printer))
	})
	return "input_schema is not a valid JSON Schema: " + strings.Join(parts, "; "), loc
}
