package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
)

// Action tags ([SAVE_NOTE: {...}]) name tools in upper case; these
// endpoints let an app check a payload before (or instead of) a turn.

// MaxBatchActions bounds POST /v1/actions/validate/batch.
const MaxBatchActions = 50

var actionTypeRe = regexp.MustCompile(`^[A-Z][A-Z0-9_]{1,63}$`)

type actionRequest struct {
	ActionType string          `json:"action_type"`
	Payload    json.RawMessage `json:"payload"`
}

// Valid accepts any action_type: a missing or misspelt one fails its
// validation in the answer's shape (validateAction), as seed 001's
// client reads every failure.
func (req actionRequest) Valid(context.Context) []coachd.FieldError { return nil }

type actionBatchRequest struct {
	Actions []actionRequest `json:"actions"`
}

func (req actionBatchRequest) Valid(ctx context.Context) []coachd.FieldError {
	if len(req.Actions) == 0 || len(req.Actions) > MaxBatchActions {
		return []coachd.FieldError{{Field: "actions", Message: "must hold 1 to 50 actions", Code: "length"}}
	}
	return nil
}

// actionResult is {ok, action_type, validated} or {ok: false, error:
// VALIDATION_ERROR, action_type, details}.
type actionResult struct {
	OK         bool                `json:"ok"`
	Error      string              `json:"error,omitempty"`
	ActionType string              `json:"action_type"`
	Validated  json.RawMessage     `json:"validated,omitempty"`
	Details    []coachd.FieldError `json:"details,omitempty"`
}

func validateAction(ts *agent.Toolset, agentTools map[string]bool, a actionRequest) actionResult {
	res := actionResult{ActionType: a.ActionType}
	fail := func(details ...coachd.FieldError) actionResult {
		res.Error, res.Details = "VALIDATION_ERROR", details
		return res
	}
	switch {
	case a.ActionType == "":
		return fail(coachd.FieldError{Field: "action_type", Message: "is required", Code: zodCode("required")})
	case !actionTypeRe.MatchString(a.ActionType):
		return fail(coachd.FieldError{Field: "action_type", Message: "unknown action type: action types are upper case, like SAVE_NOTE", Code: "unknown_action"})
	}
	name := strings.ToLower(a.ActionType)
	tool, ok := ts.Get(name)
	if !ok || !agentTools[name] || tool.Definition().Category == coachd.ToolInteractive {
		return fail(coachd.FieldError{Field: "action_type", Message: "unknown action type " + a.ActionType, Code: "unknown_action"})
	}
	payload := a.Payload
	if len(payload) == 0 || string(payload) == "null" {
		return fail(coachd.FieldError{Field: "payload", Message: "is required", Code: zodCode("required")})
	}
	if err := ts.ValidateInput(name, payload); err != nil {
		details := coachd.AsError(err).Details
		for i := range details {
			details[i].Code = zodCode(details[i].Code)
		}
		return fail(details...)
	}
	res.OK, res.Validated = true, payload
	if spec := ts.Specs([]string{name}); len(spec) == 1 {
		res.Validated = withDefaults(name, spec[0].InputSchema, payload)
	}
	return res
}

// zodCodes name a JSON Schema keyword's failure as Zod (4) names the
// issue: seed 001 validates with Zod and documents its codes ("code":
// "too_small" for a title under its minimum). A missing field is Zod's
// invalid_type, as its value is undefined.
var zodCodes = map[string]string{
	"required": "invalid_type", "type": "invalid_type",
	"minLength": "too_small", "minimum": "too_small", "exclusiveMinimum": "too_small", "minItems": "too_small", "minProperties": "too_small",
	"maxLength": "too_big", "maximum": "too_big", "exclusiveMaximum": "too_big", "maxItems": "too_big", "maxProperties": "too_big",
	"enum": "invalid_value", "const": "invalid_value",
	"pattern": "invalid_format", "format": "invalid_format",
	"additionalProperties": "unrecognized_keys", "unevaluatedProperties": "unrecognized_keys",
	"multipleOf": "not_multiple_of",
	"anyOf":      "invalid_union", "oneOf": "invalid_union",
}

// zodCode is Zod's code for a validator's; any other check (coachd's
// own, such as NUL characters) is a refinement, Zod's custom.
func zodCode(code string) string {
	if z, ok := zodCodes[code]; ok {
		return z
	}
	return "custom"
}

// impliedDefaults are defaults a built-in tool applies without its schema
// declaring them: save_note stores coachd.DefaultImportance when given no
// importance, the default seed 001 documents ("importance: 1-100 (default
// 50)").
var impliedDefaults = map[string]map[string]any{
	"save_note": {"importance": coachd.DefaultImportance},
}

// withDefaults is a valid payload as Zod's parse returns it (seed 001's
// "validated"): each property its schema declares with a default, absent
// from the payload, set to it, in nested objects too. The payload itself
// when nothing is added.
func withDefaults(tool string, schema, payload json.RawMessage) json.RawMessage {
	var sch map[string]any
	var v any
	if decodeNumbers(schema, &sch) != nil || decodeNumbers(payload, &v) != nil {
		return payload
	}
	if props, ok := sch["properties"].(map[string]any); ok {
		for field, d := range impliedDefaults[tool] {
			if p, ok := props[field].(map[string]any); ok {
				if _, has := p["default"]; !has {
					p["default"] = d
				}
			}
		}
	}
	if !fillDefaults(sch, v) {
		return payload
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return payload
	}
	return bytes.TrimSpace(buf.Bytes())
}

// fillDefaults sets the defaults of sch's properties that the object v
// lacks, and those of the objects it has; it reports whether it set any.
func fillDefaults(sch map[string]any, v any) bool {
	obj, ok := v.(map[string]any)
	props, _ := sch["properties"].(map[string]any)
	if !ok || props == nil {
		return false
	}
	set := false
	for name, p := range props {
		ps, _ := p.(map[string]any)
		if ps == nil {
			continue
		}
		if val, has := obj[name]; has {
			set = fillDefaults(ps, val) || set
		} else if d, has := ps["default"]; has {
			obj[name], set = d, true
		}
	}
	return set
}

// decodeNumbers decodes raw into v keeping numbers as written.
func decodeNumbers(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

func (s *Server) toolset() (*agent.Toolset, error) {
	if s.runner == nil || s.runner.Toolset() == nil {
		return nil, coachd.Errorf(coachd.EAPI, "this server has no tools configured")
	}
	return s.runner.Toolset(), nil
}

// agentTools are the tools some agent of the server lists: a tag runs
// only a tool of its agent, so no other is an action.
func (s *Server) agentTools() map[string]bool {
	var agents []*agent.Agent
	if s.pack != nil {
		agents = s.pack.Agents
	} else if a, ok := s.runner.Agent(""); ok {
		agents = append(agents, a)
	}
	out := map[string]bool{}
	for _, a := range agents {
		for _, name := range a.Tools {
			out[name] = true
		}
	}
	return out
}

// handleActionValidate is POST /v1/actions/validate.
func (s *Server) handleActionValidate() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts, err := s.toolset()
		if err != nil {
			s.Error(w, r, err)
			return
		}
		req, err := decode[actionRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		s.encode(w, r, http.StatusOK, validateAction(ts, s.agentTools(), req))
	})
}

// handleActionValidateBatch is POST /v1/actions/validate/batch.
func (s *Server) handleActionValidateBatch() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts, err := s.toolset()
		if err != nil {
			s.Error(w, r, err)
			return
		}
		req, err := decode[actionBatchRequest](r)
		if err != nil {
			s.Error(w, r, err)
			return
		}
		out := struct {
			OK      bool           `json:"ok"`
			Results []actionResult `json:"results"`
		}{OK: true}
		agentTools := s.agentTools()
		for _, a := range req.Actions {
			res := validateAction(ts, agentTools, a)
			out.OK = out.OK && res.OK
			out.Results = append(out.Results, res)
		}
		s.encode(w, r, http.StatusOK, out)
	})
}

// handleActionSchemas is GET /v1/actions/schemas: every tool usable as an
// action tag, by tag name.
func (s *Server) handleActionSchemas() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ts, err := s.toolset()
		if err != nil {
			s.Error(w, r, err)
			return
		}
		type schema struct {
			Tool        string          `json:"tool"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		}
		out := map[string]schema{}
		agentTools := s.agentTools()
		for _, name := range ts.Names() {
			t, _ := ts.Get(name)
			if !agentTools[name] || t.Definition().Category == coachd.ToolInteractive {
				continue
			}
			spec := ts.Specs([]string{name})[0]
			out[strings.ToUpper(name)] = schema{Tool: name, Description: spec.Description, InputSchema: spec.InputSchema}
		}
		s.encode(w, r, http.StatusOK, map[string]any{"schemas": out})
	})
}
