package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/coachd/coachd"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Toolset holds tools with their compiled input schemas.
type Toolset struct {
	tools   map[string]coachd.Tool
	defs    map[string]coachd.ToolDef // read once at Add: Definition may build its schema each call
	schemas map[string]*jsonschema.Schema
	results map[string]*jsonschema.Schema // interactive tools' answer schemas
	specs   map[string]coachd.ToolSpec    // sanitized, as served to the model
	lens    map[string]int                // len(json.Marshal(spec)), for toolsJSONLen
}

// NewToolset compiles every tool's schemas; a tool with a bad schema or a
// duplicate name is an error.
func NewToolset(tools ...coachd.Tool) (*Toolset, error) {
	ts := &Toolset{
		tools:   map[string]coachd.Tool{},
		defs:    map[string]coachd.ToolDef{},
		schemas: map[string]*jsonschema.Schema{},
		results: map[string]*jsonschema.Schema{},
		specs:   map[string]coachd.ToolSpec{},
		lens:    map[string]int{},
	}
	for _, t := range tools {
		if err := ts.Add(t); err != nil {
			return nil, err
		}
	}
	return ts, nil
}

// Add compiles and registers one tool.
func (ts *Toolset) Add(t coachd.Tool) error {
	def := t.Definition()
	if def.Name == "" {
		return fmt.Errorf("agent: tool without a name")
	}
	if _, dup := ts.tools[def.Name]; dup {
		return fmt.Errorf("agent: tool %q registered twice", def.Name)
	}
	sch, err := compileSchema(def.Name, def.InputSchema)
	if err != nil {
		return err
	}
	if len(def.ResultSchema) > 0 {
		rs, err := compileSchema(def.Name+".result", def.ResultSchema)
		if err != nil {
			return err
		}
		ts.results[def.Name] = rs
	}
	clean, err := SanitizeSchema(def.InputSchema)
	if err != nil {
		return fmt.Errorf("agent: tool %s: %w", def.Name, err)
	}
	ts.tools[def.Name] = t
	ts.defs[def.Name] = def
	ts.schemas[def.Name] = sch
	spec := coachd.ToolSpec{Name: def.Name, Description: def.Description, InputSchema: clean}
	enc, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("agent: tool %s: %w", def.Name, err)
	}
	ts.specs[def.Name], ts.lens[def.Name] = spec, len(enc)
	return nil
}

// toolsJSONLen is len(json.Marshal(tools)) without encoding the tools
// that are this set's own (Specs): their lengths were taken once (Add).
func (ts *Toolset) toolsJSONLen(tools []coachd.ToolSpec) int {
	if tools == nil {
		return len("null")
	}
	n := 1 + len(tools) // the brackets and the commas between
	if len(tools) == 0 {
		n = 2
	}
	for _, s := range tools {
		own := ts.specs[s.Name]
		l, ok := ts.lens[s.Name]
		if !ok || s.Description != own.Description || !bytes.Equal(s.InputSchema, own.InputSchema) {
			enc, err := json.Marshal(s)
			if err != nil {
				return 0 // the list does not encode either: it counted as nothing
			}
			l = len(enc)
		}
		n += l
	}
	return n
}

// With returns a copy of ts in which tools replace the ones of the same
// name (or are added): a review binds read_file, run_command… to its
// workspace for one turn. ts itself is not changed.
func (ts *Toolset) With(tools ...coachd.Tool) (*Toolset, error) {
	out := &Toolset{
		tools:   maps.Clone(ts.tools),
		defs:    maps.Clone(ts.defs),
		schemas: maps.Clone(ts.schemas),
		results: maps.Clone(ts.results),
		specs:   maps.Clone(ts.specs),
		lens:    maps.Clone(ts.lens),
	}
	for _, t := range tools {
		name := t.Definition().Name
		delete(out.tools, name)
		delete(out.results, name)
		if err := out.Add(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func compileSchema(name string, raw json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("agent: tool %s: schema: %w", name, err)
	}
	// The compiler reads each number as an exact big.Rat, at a cost that
	// grows with its digits and exponent (a schema may be an MCP server's).
	for _, fe := range badValues(doc, nil, nil) {
		if fe.Code == "range" {
			return nil, fmt.Errorf("agent: tool %s: schema: %s %s", name, fe.Field, fe.Message)
		}
	}
	c := jsonschema.NewCompiler()
	// A declared format is a rule (seed 001's event_id is a UUID), not
	// the annotation draft 2020-12 makes it by default.
	c.AssertFormat()
	// A schema is whole in itself: the library's default loader would
	// open any file: URL a $ref names (a schema may come from a third
	// party's MCP server), blocking on a FIFO or reading local files.
	c.UseLoader(noLoader{})
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("agent: tool %s: schema: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("agent: tool %s: schema: %w", name, err)
	}
	return sch, nil
}

// noLoader refuses every $ref outside the schema being compiled.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, errors.New("a $ref must point inside the schema")
}

// Get returns the named tool.
func (ts *Toolset) Get(name string) (coachd.Tool, bool) {
	t, ok := ts.tools[name]
	return t, ok
}

// Category returns the named tool's category ("" for an unknown tool).
func (ts *Toolset) Category(name string) coachd.ToolCategory { return ts.defs[name].Category }

// Truncations maps each of the named tools that has a re-send policy to
// the input fields it truncates (see History).
func (ts *Toolset) Truncations(names []string) map[string][]string {
	m := map[string][]string{}
	for _, n := range names {
		if f := ts.defs[n].Truncate; len(f) > 0 {
			m[n] = f
		}
	}
	return m
}

// Names returns the registered tool names, sorted.
func (ts *Toolset) Names() []string {
	names := make([]string, 0, len(ts.tools))
	for n := range ts.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Specs returns the sanitized specs of the named tools, in the given order;
// unknown names are skipped.
func (ts *Toolset) Specs(names []string) []coachd.ToolSpec {
	out := make([]coachd.ToolSpec, 0, len(names))
	for _, n := range names {
		if s, ok := ts.specs[n]; ok {
			out = append(out, s)
		}
	}
	return out
}

// ValidateInput checks input against the tool's schema. The error lists each
// problem with the field it concerns, worded for the model to correct.
func (ts *Toolset) ValidateInput(name string, input json.RawMessage) error {
	sch, ok := ts.schemas[name]
	if !ok {
		return coachd.Errorf(coachd.ENOTFOUND, "unknown tool %q", name)
	}
	if err := validate(sch, input); err != nil {
		return err
	}
	if c, ok := ts.tools[name].(coachd.InputChecker); ok {
		return c.CheckInput(input)
	}
	return nil
}

// plainIntegers returns input, valid JSON that a schema accepted, with
// each integer written with a fraction or an exponent (50.0, 5e1,
// 5.00E+1) rewritten as plain digits (50) when it fits an int64; all else,
// key order and spacing included, is kept byte for byte, and input itself
// is returned when nothing changes. JSON Schema's "integer" takes 50.0,
// which encoding/json refuses for a Go int: the tool gets the value its
// schema accepted in the form it decodes. Only what a tool is handed is
// rewritten, never the tool_use stored in the history.
func plainIntegers(input json.RawMessage) json.RawMessage {
	var out []byte // nil until a number changes
	last := 0      // input[last:] is not in out yet
	for i := 0; i < len(input); {
		switch c := input[i]; {
		case c == '"':
			i = skipJSONString(input, i)
		case c == '-' || '0' <= c && c <= '9':
			j := i + 1
			for j < len(input) && strings.IndexByte("0123456789.eE+-", input[j]) >= 0 {
				j++
			}
			if n, ok := plainInteger(input[i:j]); ok {
				out = append(append(out, input[last:i]...), n...)
				last = j
			}
			i = j
		default:
			i++
		}
	}
	if out == nil {
		return input
	}
	return append(out, input[last:]...)
}

// skipJSONString returns the index after the string that opens at i.
func skipJSONString(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(data)
}

// plainInteger returns the JSON number num as plain digits when it has a
// fraction or an exponent, is an integer and fits an int64.
func plainInteger(num []byte) ([]byte, bool) {
	if bytes.IndexAny(num, ".eE") < 0 {
		return nil, false // plain already
	}
	neg := num[0] == '-'
	if neg {
		num = num[1:]
	}
	mant, expPart, hasExp := bytes.Cut(num, []byte("e"))
	if !hasExp {
		mant, expPart, hasExp = bytes.Cut(num, []byte("E"))
	}
	whole, frac, dot := bytes.Cut(mant, []byte("."))
	if len(whole) == 0 || dot && len(frac) == 0 || hasExp && len(expPart) == 0 {
		return nil, false // not a number: left to the JSON check
	}
	// The value is digits × 10^exp, digits without leading or trailing
	// zeros.
	digits := strings.TrimLeft(string(whole)+string(frac), "0")
	if digits == "" {
		return []byte("0"), true // 0.0, -0.0, 0e7
	}
	var exp int64
	if hasExp {
		sign := int64(1)
		if len(expPart) > 0 && (expPart[0] == '+' || expPart[0] == '-') {
			if expPart[0] == '-' {
				sign = -1
			}
			expPart = expPart[1:]
		}
		e := strings.TrimLeft(string(expPart), "0")
		if len(e) > 12 {
			e = "1" + strings.Repeat("0", 12) // past any input's length: the same answer
		}
		n, err := strconv.ParseInt("0"+e, 10, 64)
		if err != nil {
			return nil, false
		}
		exp = sign * n
	}
	exp -= int64(len(frac))
	trimmed := strings.TrimRight(digits, "0")
	exp += int64(len(digits) - len(trimmed))
	if exp < 0 || int64(len(trimmed))+exp > 19 {
		return nil, false // a fraction, or past int64
	}
	s := trimmed + strings.Repeat("0", int(exp))
	if neg {
		s = "-" + s
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, false
	}
	return strconv.AppendInt(nil, v, 10), true
}

// ValidateResult checks an interactive tool's answer against the schema the
// tool declares; tools without one accept any answer.
func (ts *Toolset) ValidateResult(name string, answer json.RawMessage) error {
	sch, ok := ts.results[name]
	if !ok {
		return nil
	}
	return validate(sch, answer)
}

var printer = message.NewPrinter(language.English)

// maxInputProblems bounds the problems an invalid input is answered
// with: each wrong item of an array is one, and the answer goes to the
// client or into the model's history.
const maxInputProblems = 20

func validate(sch *jsonschema.Schema, input json.RawMessage) error {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return coachd.Invalid(coachd.FieldError{Field: "(input)", Message: "is not valid JSON", Code: "json"})
	}
	// The model (or an app) may write U+0000, which a schema cannot
	// forbid and PostgreSQL TEXT cannot store (issue 20 finding 6), or a
	// number past float64 that the schema would read as an exact big.Rat
	// at great cost: refuse both here, once for every tool, so the model
	// reads which field to fix.
	if bad := badValues(v, nil, nil); len(bad) > 0 {
		return coachd.Invalid(bad...)
	}
	err = sch.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return coachd.Invalid(coachd.FieldError{Field: "(input)", Message: err.Error(), Code: "schema"})
	}
	var details []coachd.FieldError
	more := 0
	leaves(ve, func(e *jsonschema.ValidationError) {
		if len(details) >= maxInputProblems {
			more++
			return
		}
		// A missing property is named as the field itself ("title": is
		// required), as apps' own validators do (seed 001's).
		if req, ok := e.ErrorKind.(*kind.Required); ok {
			for _, name := range req.Missing {
				details = append(details, coachd.FieldError{Field: strings.Join(append(slices.Clone(e.InstanceLocation), name), "."), Message: "is required", Code: "required"})
			}
			return
		}
		field := strings.Join(e.InstanceLocation, ".")
		if field == "" {
			field = "(input)"
		}
		kw := e.ErrorKind.KeywordPath()
		code := "schema"
		if len(kw) > 0 {
			code = kw[len(kw)-1]
		}
		details = append(details, coachd.FieldError{Field: field, Message: e.ErrorKind.LocalizedString(printer), Code: code})
	})
	if more > 0 {
		details = append(details, coachd.FieldError{Field: "(input)", Message: fmt.Sprintf("and %d more problems, not listed", more), Code: "schema"})
	}
	return coachd.Invalid(details...)
}

func leaves(e *jsonschema.ValidationError, f func(*jsonschema.ValidationError)) {
	if len(e.Causes) == 0 {
		f(e)
		return
	}
	for _, c := range e.Causes {
		leaves(c, f)
	}
}

// InvalidInputText renders a validation error as the tool_result text the
// model sees.
func InvalidInputText(tool string, err error) string {
	e := coachd.AsError(err)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Invalid input for %s; nothing was done. Fix these and call it again:", tool)
	if len(e.Details) == 0 {
		sb.WriteString("\n- " + e.Message)
	}
	for _, d := range e.Details {
		fmt.Fprintf(&sb, "\n- %s: %s", d.Field, d.Message)
	}
	return sb.String()
}

// dropKeys are schema keys that confuse strict consumers and say nothing a
// model needs.
var dropKeys = map[string]bool{"title": true, "$schema": true, "$id": true, "$comment": true}

// SanitizeSchema returns the schema without title, $schema, $id and
// $comment keys (at every depth), with single-element allOf wrappers merged
// into their parent.
func SanitizeSchema(raw json.RawMessage) (json.RawMessage, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, fmt.Errorf("schema is not valid JSON: %w", err)
	}
	out, err := json.Marshal(sanitize(v, false))
	return out, err
}

// sanitize walks a schema; inProps says v is a "properties" map, whose keys
// are property names (a property may be called "title").
func sanitize(v any, inProps bool) any {
	switch x := v.(type) {
	case map[string]any:
		if !inProps {
			mergeAllOf(x)
		}
		out := make(map[string]any, len(x))
		for k, iv := range x {
			if !inProps && dropKeys[k] {
				continue
			}
			out[k] = sanitize(iv, !inProps && (k == "properties" || k == "$defs" || k == "definitions" || k == "patternProperties"))
		}
		return out
	case []any:
		for i := range x {
			x[i] = sanitize(x[i], false)
		}
		return x
	}
	return v
}
