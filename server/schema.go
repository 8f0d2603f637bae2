package server

import (
	"net/http"

	"github.com/coachd/coachd"
)

// The app's data as the pack's data sources declare it (seed 001's
// /api/coach/schema, /schema/tables and /schema/prompt): the same for
// every user, since rows are scoped when read, not the schema.

// schema is the pack's data schema; empty without data sources.
func (s *Server) schema() coachd.DataSchema {
	if s.pack != nil && s.pack.Data != nil {
		return s.pack.Data.Schema()
	}
	return coachd.DataSchema{Tables: []coachd.DataTable{}, Queries: []coachd.DataQuery{}, Actions: []coachd.DataAction{}}
}

// handleSchema is GET /v1/schema: tables with their columns and types,
// read or write, scope; named queries; actions.
func (s *Server) handleSchema() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.encode(w, r, http.StatusOK, s.schema())
	})
}

// tableSummary is a table as GET /v1/schema/tables lists it.
type tableSummary struct {
	Name    string   `json:"name"`
	Access  string   `json:"access"`
	Shared  bool     `json:"shared"`
	Columns []string `json:"columns"`
}

// handleSchemaTables is GET /v1/schema/tables: the compact list.
func (s *Server) handleSchemaTables() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out := []tableSummary{}
		for _, t := range s.schema().Tables {
			ts := tableSummary{Name: t.Name, Access: t.Access, Shared: t.Shared, Columns: []string{}}
			for _, c := range t.Columns {
				if c.Read {
					ts.Columns = append(ts.Columns, c.Name)
				}
			}
			out = append(out, ts)
		}
		s.encode(w, r, http.StatusOK, map[string]any{"tables": out})
	})
}

// handleSchemaPrompt is GET /v1/schema/prompt: the data_schema section
// as agents that list it get it.
func (s *Server) handleSchemaPrompt() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prompt := ""
		if s.pack != nil {
			prompt = s.pack.DataSchema
		}
		s.encode(w, r, http.StatusOK, map[string]any{"prompt": prompt, "bytes": len(prompt)})
	})
}
