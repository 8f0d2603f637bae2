package datasource

import (
	"bytes"
	"encoding/json"
	"strings"
)

// pgArray turns the JSON text of a list (how an input list reaches a
// statement, arg) into a Postgres array literal: {"a","b \"c\"",NULL,3}.
// Bound as its JSON text, a list is refused by an array column
// ("malformed array literal"). ok is false for any other text.
func pgArray(s string) (string, bool) {
	if !strings.HasPrefix(strings.TrimSpace(s), "[") {
		return "", false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var list []any
	if dec.Decode(&list) != nil {
		return "", false
	}
	var b strings.Builder
	writePGArray(&b, list)
	return b.String(), true
}

func writePGArray(b *strings.Builder, list []any) {
	b.WriteByte('{')
	for i, x := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		switch x := x.(type) {
		case nil:
			b.WriteString("NULL")
		case []any: // a dimension more
			writePGArray(b, x)
		case json.Number:
			b.WriteString(x.String())
		case bool:
			if x {
				b.WriteString("true")
			} else {
				b.WriteString("false")
			}
		case string:
			quotePG(b, x)
		default: // an object: its JSON (a json[] element)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.Encode(x)
			quotePG(b, strings.TrimSuffix(buf.String(), "\n"))
		}
	}
	b.WriteByte('}')
}

// quotePG writes s as a quoted array element: " and \ escaped.
func quotePG(b *strings.Builder, s string) {
	b.WriteByte('"')
	b.WriteString(strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s))
	b.WriteByte('"')
}
