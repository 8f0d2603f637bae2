package server

import (
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

func (req actionRequest) Valid(context.Context) []coachd.FieldError {
	if !actionTypeRe.MatchString(req.ActionType) {
		return []coachd.FieldError{{Field: "action_type", Message: "must be an upper-case action name like SAVE_NOTE", Code: "format"}}
	}
	return nil
}

type actionBatchRequest struct {
	Actions []actionRequest `json:"actions"`
}

func (req actionBatchRequest) Valid(ctx context.Context) []coachd.FieldError {
	if len(req.Actions) == 0 || len(req.Actions) > MaxBatchActions {
		return []coachd.FieldError{{Field: "actions", Message: "must hold 1 to 50 actions", Code: "length"}}
	}
	for _, a := range req.Actions {
		if errs := a.Valid(ctx); len(errs) > 0 {
			errs[0].Field = "actions[]." + errs[0].Field
			return errs
		}
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

func validateAction(ts *agent.Toolset, a actionRequest) actionResult {
	res := actionResult{ActionType: a.ActionType}
	fail := func(details ...coachd.FieldError) actionResult {
		res.Error, res.Details = "VALIDATION_ERROR", details
		return res
	}
	name := strings.ToLower(a.ActionType)
	tool, ok := ts.Get(name)
	if !ok || tool.Definition().Category == coachd.ToolInteractive {
		return fail(coachd.FieldError{Field: "action_type", Message: "unknown action type " + a.ActionType, Code: "unknown_action"})
	}
	payload := a.Payload
	if len(payload) == 0 || string(payload) == "null" {
		return fail(coachd.FieldError{Field: "payload", Message: "is required", Code: "required"})
	}
	if err := ts.ValidateInput(name, payload); err != nil {
		return fail(coachd.AsError(err).Details...)
	}
	res.OK, res.Validated = true, payload
	return res
}

func (s *Server) toolset() (*agent.Toolset, error) {
	if s.runner == nil || s.runner.Toolset() == nil {
		return nil, coachd.Errorf(coachd.EAPI, "this server has no tools configured")
	}
	return s.runner.Toolset(), nil
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
		s.encode(w, r, http.StatusOK, validateAction(ts, req))
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
		for _, a := range req.Actions {
			res := validateAction(ts, a)
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
		for _, name := range ts.Names() {
			t, _ := ts.Get(name)
			if t.Definition().Category == coachd.ToolInteractive {
				continue
			}
			spec := ts.Specs([]string{name})[0]
			out[strings.ToUpper(name)] = schema{Tool: name, Description: spec.Description, InputSchema: spec.InputSchema}
		}
		s.encode(w, r, http.StatusOK, map[string]any{"schemas": out})
	})
}
