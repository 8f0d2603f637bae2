package agent

import (
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"gopkg.in/yaml.v3"
)

// An agent's requires_approval list makes the matching calls wait for the
// user's approval before they run:
//
//	requires_approval:
//	  - delete_note                      # every call
//	  - crm__*                           # every tool of the crm MCP server
//	  - tool: refund                     # only calls whose input matches
//	    when: {amount: {gt: 100}, currency: EUR}
//
// Rules are keyed by tool name (a glob with *), whatever the tool's origin:
// built-in, webhook or MCP. A when maps input fields (a.b reaches into an
// object) to a value (eq) or to {op: value} with op one of eq ne lt lte gt
// gte in contains; every condition must hold. A field the input lacks
// matches only ne. A webhook tool file may also say requires_approval: true
// (coachd.ToolDef.RequiresApproval).

// ApprovalRule is one item of an agent's requires_approval list.
type ApprovalRule struct {
	Tool string // a tool name, or a glob with *
	When []Condition
}

// Condition is one input test of an approval rule.
type Condition struct {
	Field string // an input field; a.b reaches into objects
	Op    string
	Value any // a JSON value: float64, string, bool, nil or []any
}

// Condition operators.
var approvalOps = []string{"eq", "ne", "lt", "lte", "gt", "gte", "in", "contains"}

var opSymbols = map[string]string{"eq": "=", "ne": "≠", "lt": "<", "lte": "≤", "gt": ">", "gte": "≥", "in": "in", "contains": "contains"}

// holds reports whether every condition of the rule holds for input.
func (r ApprovalRule) holds(input map[string]any) bool {
	for _, c := range r.When {
		if !c.holds(input) {
			return false
		}
	}
	return true
}

// reason says why a call of name needs approval under the rule.
func (r ApprovalRule) reason(name string) string {
	if len(r.When) == 0 {
		return name + " needs your approval"
	}
	conds := make([]string, len(r.When))
	for i, c := range r.When {
		v, _ := json.Marshal(c.Value)
		conds[i] = c.Field + " " + opSymbols[c.Op] + " " + string(v)
	}
	return name + " needs your approval when " + strings.Join(conds, " and ")
}

// holds reports whether the condition holds for the field's value or, when
// the input also has keys that differ from the field's only in case, for
// any of them: Go's encoding/json and .NET read {"Amount": 500} into a
// field named amount, so such a key must not slip past a rule on amount.
func (c Condition) holds(input map[string]any) bool {
	vs := lookupFold(input, c.Field)
	if len(vs) == 0 {
		return c.Op == "ne"
	}
	return slices.ContainsFunc(vs, c.holdsFor)
}

func (c Condition) holdsFor(v any) bool {
	switch c.Op {
	case "eq":
		return sameFold(v, c.Value)
	case "ne":
		return !reflect.DeepEqual(v, c.Value) // exact: a looser ne would let calls through
	case "lt", "lte", "gt", "gte":
		n, ok := compare(v, c.Value)
		return ok && map[string]bool{"lt": n < 0, "lte": n <= 0, "gt": n > 0, "gte": n >= 0}[c.Op]
	case "in":
		list, _ := c.Value.([]any)
		return slices.ContainsFunc(list, func(x any) bool { return sameFold(v, x) })
	case "contains":
		switch v := v.(type) {
		case string:
			s, ok := c.Value.(string)
			return ok && strings.Contains(strings.ToLower(v), strings.ToLower(s))
		case []any:
			return slices.ContainsFunc(v, func(x any) bool { return sameFold(x, c.Value) })
		}
	}
	return false
}

// sameFold reports whether a and b are equal, strings in any case: the
// conditions that make a call wait read "eur" as EUR, as a payment app
// does (Stripe's codes are lowercase), and "Password" as password.
func sameFold(a, b any) bool {
	if as, ok := a.(string); ok {
		bs, ok := b.(string)
		return ok && strings.EqualFold(as, bs)
	}
	return reflect.DeepEqual(a, b)
}

// compare orders two numbers or two strings. An input string that
// reads as a number is compared as one with a rule's number: the app
// reads it so (pydantic coerces "500" to 500, JavaScript compares
// "500" > 100 as true), and a rule on amount must not let it pass.
func compare(a, b any) (int, bool) {
	switch a := a.(type) {
	case float64:
		if b, ok := b.(float64); ok {
			return cmpOrdered(a, b), true
		}
	case string:
		switch b := b.(type) {
		case string:
			return strings.Compare(a, b), true
		case float64:
			if n, err := strconv.ParseFloat(strings.TrimSpace(a), 64); err == nil {
				return cmpOrdered(n, b), true
			}
		}
	}
	return 0, false
}

func cmpOrdered(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// lookupFold returns the values at field (a.b reaches into objects),
// matching each key exactly or in any case.
func lookupFold(v map[string]any, field string) []any {
	cur := []any{v}
	for _, key := range strings.Split(field, ".") {
		var next []any
		for _, c := range cur {
			m, ok := c.(map[string]any)
			if !ok {
				continue
			}
			for k, x := range m {
				if strings.EqualFold(k, key) {
					next = append(next, x)
				}
			}
		}
		cur = next
	}
	return cur
}

// ApprovalReason says why a call of the tool defined by def with input
// must wait for the user's approval; ok is false when it may run.
func (a *Agent) ApprovalReason(def coachd.ToolDef, input json.RawMessage) (reason string, ok bool) {
	if def.RequiresApproval {
		return def.Name + " needs your approval", true
	}
	if len(a.Approvals) == 0 {
		return "", false
	}
	var in map[string]any // decoded once, when a rule with conditions names the tool
	for _, r := range a.Approvals {
		if ok, _ := path.Match(r.Tool, def.Name); !ok {
			continue
		}
		if in == nil && len(r.When) > 0 {
			if err := json.Unmarshal(input, &in); err != nil || in == nil {
				// An input the schema took but Go cannot read (1e999 is
				// past float64) cannot be checked: it waits, never runs
				// unasked.
				return r.reason(def.Name), true
			}
		}
		if r.holds(in) {
			return r.reason(def.Name), true
		}
	}
	return "", false
}

// parseApprovals reads an agent's requires_approval list, reporting every
// problem at its line. known are the pack's tools.
func parseApprovals(fm *frontMatter, a *Agent, known map[string]coachd.Tool) []ApprovalRule {
	n := fm.node("requires_approval")
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		fm.bad(fm.line("requires_approval"), "requires_approval is a list of tool names or {tool, when} rules")
		return nil
	}
	var out []ApprovalRule
	for _, item := range n.Content {
		line := item.Line + fm.off
		var r ApprovalRule
		var when *yaml.Node
		switch item.Kind {
		case yaml.ScalarNode:
			r.Tool = strings.TrimSpace(item.Value)
		case yaml.MappingNode:
			fm.checkKeys(item, []string{"tool", "when"})
			for i := 0; i+1 < len(item.Content); i += 2 {
				switch k, v := item.Content[i].Value, item.Content[i+1]; k {
				case "tool":
					r.Tool = strings.TrimSpace(v.Value)
				case "when":
					when = v
				}
			}
		default:
			fm.bad(line, "a requires_approval item is a tool name or {tool: name, when: {field: value}}")
			continue
		}
		def, ok := checkApprovalTool(fm, line, r.Tool, known)
		if !ok {
			continue
		}
		if when != nil {
			if r.When, ok = parseWhen(fm, when, r.Tool, def); !ok {
				continue
			}
		}
		out = append(out, r)
	}
	return out
}

// checkApprovalTool checks a rule's tool: a valid glob, or a tool the pack
// knows (MCP tools, <prefix>__<tool>, are listed only once their server
// runs, so their names are taken as written). def is the known tool's.
func checkApprovalTool(fm *frontMatter, line int, name string, known map[string]coachd.Tool) (*coachd.ToolDef, bool) {
	switch {
	case name == "" || len(name) > 128:
		fm.bad(line, "requires_approval: tool is required, a tool name or a glob like crm__*")
		return nil, false
	case strings.ContainsAny(name, "*?["):
		if _, err := path.Match(name, ""); err != nil {
			fm.bad(line, fmt.Sprintf("requires_approval: %q is not a valid glob", name))
			return nil, false
		}
		return nil, true
	case known[name] != nil:
		def := known[name].Definition()
		if def.Category == coachd.ToolInteractive {
			fm.bad(line, fmt.Sprintf("requires_approval: %s is interactive: the user answers it already", name))
			return nil, false
		}
		return &def, true
	case strings.Contains(name, "__"):
		return nil, true
	}
	fm.bad(line, fmt.Sprintf("requires_approval: unknown tool %q (not built in, no tools/%s.yaml; MCP tools are named <prefix>__<tool>)", name, name))
	return nil, false
}

// parseWhen reads a rule's conditions. With the tool's definition at
// hand, each field must be one of its input's properties.
func parseWhen(fm *frontMatter, when *yaml.Node, tool string, def *coachd.ToolDef) ([]Condition, bool) {
	line := when.Line + fm.off
	if when.Kind != yaml.MappingNode || len(when.Content) == 0 {
		fm.bad(line, "requires_approval: when maps input fields to a value or to {op: value}")
		return nil, false
	}
	props, numeric := schemaProperties(def), numberFields(def)
	var out []Condition
	ok := true
	for i := 0; i+1 < len(when.Content); i += 2 {
		k, v := when.Content[i], when.Content[i+1]
		field := k.Value
		top, _, _ := strings.Cut(field, ".")
		if field == "" || (props != nil && !slices.Contains(props, top)) {
			fm.bad(k.Line+fm.off, fmt.Sprintf("requires_approval: %s has no input field %q (fields: %s)", tool, field, strings.Join(props, ", ")))
			ok = false
			continue
		}
		conds := []*yaml.Node{v}
		ops := []string{"eq"}
		if v.Kind == yaml.MappingNode {
			conds, ops = nil, nil
			for j := 0; j+1 < len(v.Content); j += 2 {
				ops = append(ops, v.Content[j].Value)
				conds = append(conds, v.Content[j+1])
			}
		}
		for j, op := range ops {
			c, err := condition(field, op, conds[j])
			if err == "" && numeric[field] {
				err = numberValue(&c)
			}
			if err != "" {
				fm.bad(conds[j].Line+fm.off, "requires_approval: "+field+": "+err)
				ok = false
				continue
			}
			out = append(out, c)
		}
	}
	return out, ok
}

// condition builds one condition, or says what is wrong with it.
func condition(field, op string, n *yaml.Node) (Condition, string) {
	if !slices.Contains(approvalOps, op) {
		return Condition{}, fmt.Sprintf("unknown op %q (ops: %s)", op, strings.Join(approvalOps, " "))
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return Condition{}, err.Error()
	}
	// One JSON shape for values and inputs: numbers are float64.
	raw, err := json.Marshal(v)
	if err != nil || json.Unmarshal(raw, &v) != nil {
		return Condition{}, "the value must be a JSON value"
	}
	switch op {
	case "lt", "lte", "gt", "gte":
		switch v.(type) {
		case float64, string:
		default:
			return Condition{}, op + " needs a number or a string"
		}
	case "in":
		if _, ok := v.([]any); !ok {
			return Condition{}, "in needs a list of values"
		}
	case "contains":
		switch v.(type) {
		case map[string]any, []any:
			return Condition{}, "contains needs a string, number or boolean"
		}
	case "eq", "ne":
		if _, ok := v.(map[string]any); ok {
			return Condition{}, op + " compares with a string, number, boolean, null or list"
		}
	}
	return Condition{Field: field, Op: op, Value: v}, ""
}

// numberValue makes a condition on a number field compare with numbers:
// a string value that is one becomes it, and one that is not ("1,000",
// "high") is a problem, as such a condition would never hold.
func numberValue(c *Condition) string {
	conv := func(v any) (any, string) {
		s, ok := v.(string)
		if !ok {
			return v, ""
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Sprintf("%s is a number: %q is not one", c.Field, s)
		}
		return n, ""
	}
	if c.Op == "contains" {
		return ""
	}
	var err string
	if list, ok := c.Value.([]any); ok {
		for i := range list {
			if list[i], err = conv(list[i]); err != "" {
				return err
			}
		}
		return ""
	}
	c.Value, err = conv(c.Value)
	return err
}

// numberFields are a tool's top-level input properties of type number or
// integer.
func numberFields(def *coachd.ToolDef) map[string]bool {
	if def == nil {
		return nil
	}
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	json.Unmarshal(def.InputSchema, &s)
	out := map[string]bool{}
	for name, p := range s.Properties {
		out[name] = p.Type == "number" || p.Type == "integer"
	}
	return out
}

// schemaProperties lists a tool's top-level input properties; nil when
// the tool is unknown or its schema names none (anything goes).
func schemaProperties(def *coachd.ToolDef) []string {
	if def == nil {
		return nil
	}
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(def.InputSchema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	out := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
