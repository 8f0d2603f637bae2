package agent

import (
	"reflect"
	"slices"
)

// mergeAllOf merges a one-item allOf into the schema x that holds it:
// properties and required of both are kept, and another key the item
// has takes its place unless x has it with another value; then the two
// cannot be one schema, and allOf stays.
func mergeAllOf(x map[string]any) {
	all, ok := x["allOf"].([]any)
	if !ok || len(all) != 1 {
		return
	}
	inner, ok := all[0].(map[string]any)
	if !ok {
		return
	}
	for k, iv := range inner {
		xv, exists := x[k]
		if !exists || reflect.DeepEqual(xv, iv) {
			continue
		}
		switch k {
		case "properties":
			xp, ok1 := xv.(map[string]any)
			ip, ok2 := iv.(map[string]any)
			if !ok1 || !ok2 {
				return
			}
			for name, s := range ip {
				if other, both := xp[name]; both && !reflect.DeepEqual(other, s) {
					return
				}
			}
		case "required":
			_, ok1 := xv.([]any)
			_, ok2 := iv.([]any)
			if !ok1 || !ok2 {
				return
			}
		default:
			return
		}
	}
	delete(x, "allOf")
	for k, iv := range inner {
		switch xv := x[k].(type) {
		case nil:
			x[k] = iv
		case map[string]any:
			if k == "properties" {
				for name, s := range iv.(map[string]any) {
					xv[name] = s
				}
			}
		case []any:
			if k == "required" {
				for _, r := range iv.([]any) {
					if !slices.ContainsFunc(xv, func(v any) bool { return reflect.DeepEqual(v, r) }) {
						xv = append(xv, r)
					}
				}
				x[k] = xv
			}
		}
	}
}
