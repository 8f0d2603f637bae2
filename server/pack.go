package server

import (
	"encoding/json"
	"net/http"

	"github.com/coachd/coachd/agent"
)

// agentInfo is an agent as GET /v1/agents lists it: what a caller needs to
// pick one, not its prompt.
type agentInfo struct {
	Name             string              `json:"name"`
	Description      string              `json:"description"`
	Default          bool                `json:"default"`
	Model            string              `json:"model,omitempty"`
	Tools            []string            `json:"tools"`
	Skills           []string            `json:"skills"`
	Arcs             []string            `json:"arcs,omitempty"`
	Permissions      map[string][]string `json:"permissions,omitempty"`
	Contracts        *agent.Contracts    `json:"contracts,omitempty"`
	ActionTags       bool                `json:"action_tags"`
	FreePreviewTurns int                 `json:"free_preview_turns"`
	// Internal agents (triggers: []) are started by the admin, a review
	// or another agent, never by a user key.
	Internal         bool     `json:"internal,omitempty"`
	Triggers         []string `json:"triggers,omitempty"`
	Stack            string   `json:"stack,omitempty"`
	CollaboratesWith []string `json:"collaborates_with,omitempty"`
}

type skillInfo struct {
	Name    string          `json:"name"`
	Summary string          `json:"summary"`
	When    json.RawMessage `json:"when"`
}

func infoOf(a *agent.Agent, def bool, p *agent.Pack) agentInfo {
	info := agentInfo{
		Name: a.Name, Description: a.Description, Default: def, Model: a.Model,
		Tools: a.Tools, Skills: []string{}, Permissions: a.Permissions,
		ActionTags: a.ActionTags, FreePreviewTurns: a.FreePreviewTurns,
		Internal: a.Internal, Triggers: a.Triggers, Stack: a.Stack, CollaboratesWith: a.CollaboratesWith,
	}
	if info.Tools == nil {
		info.Tools = []string{}
	}
	for _, s := range a.Skills {
		info.Skills = append(info.Skills, s.Name)
	}
	if p != nil {
		info.Arcs = p.Arcs(a.Name)
	}
	if c := a.Contracts; len(c.MustCall) > 0 || len(c.MustNotCall) > 0 || len(c.MustOutput) > 0 {
		info.Contracts = &c
	}
	return info
}

// handleAgentList is GET /v1/agents: the pack's agents, or the built-in
// default agent when no pack is loaded.
func (s *Server) handleAgentList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := []agentInfo{}
		switch {
		case s.pack != nil:
			for _, a := range s.pack.Agents {
				out = append(out, infoOf(a, a == s.pack.Default(), s.pack))
			}
		case s.runner != nil:
			if a, ok := s.runner.Agent(""); ok {
				out = append(out, infoOf(a, true, nil))
			}
		}
		s.encode(w, r, http.StatusOK, map[string]any{"agents": out})
	})
}

// handleSkillList is GET /v1/skills.
func (s *Server) handleSkillList() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := []skillInfo{}
		if s.pack != nil {
			for _, sk := range s.pack.Skills {
				when, _ := json.Marshal(sk.When)
				out = append(out, skillInfo{Name: sk.Name, Summary: sk.Summary, When: when})
			}
		}
		s.encode(w, r, http.StatusOK, map[string]any{"skills": out})
	})
}
