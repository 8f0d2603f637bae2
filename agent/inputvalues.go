package agent

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
)

// Bounds of a number a tool input may hold: no tool reads more than a
// float64 (or the app behind a webhook more than it documents), and the
// schema library reads each number it checks as an exact big.Rat, whose
// cost grows with the digits and the exponent (1e999999: tens of ms).
const (
	maxNumberLen = 100 // characters of its literal
	maxExponent  = 400 // |e|, past float64's range either way
)

// badValues lists the strings and keys of a decoded JSON value that hold
// a NUL character, and its numbers past the bounds above, named like
// schema errors (fields joined by dots).
func badValues(v any, path []string, out []coachd.FieldError) []coachd.FieldError {
	field := func(p []string) string {
		if len(p) == 0 {
			return "(input)"
		}
		return strings.Join(p, ".")
	}
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			out = append(out, coachd.FieldError{Field: field(path), Message: "must not contain NUL (U+0000) characters", Code: "nul"})
		}
	case json.Number:
		if !numberInRange(string(x)) {
			out = append(out, coachd.FieldError{Field: field(path), Message: "is a number out of range: at most 100 characters, within ±1e400 and finite as a 64-bit float", Code: "range"})
		}
	case []any:
		for i, e := range x {
			out = badValues(e, append(path[:len(path):len(path)], strconv.Itoa(i)), out)
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := append(path[:len(path):len(path)], k)
			if strings.IndexByte(k, 0) >= 0 {
				out = append(out, coachd.FieldError{Field: field(p), Message: "is a field name with a NUL (U+0000) character", Code: "nul"})
				continue
			}
			out = badValues(x[k], p, out)
		}
	}
	return out
}

// numberInRange reports whether a JSON number literal is within the
// bounds: short, a finite float64, and with a small exponent (1e-999999
// parses as 0, but not cheaply as a big.Rat).
func numberInRange(lit string) bool {
	if len(lit) > maxNumberLen {
		return false
	}
	if _, err := strconv.ParseFloat(lit, 64); err != nil {
		return false
	}
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		exp, err := strconv.Atoi(lit[i+1:])
		return err == nil && exp >= -maxExponent && exp <= maxExponent
	}
	return true
}
