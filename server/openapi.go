package server

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"gopkg.in/yaml.v3"
)

//go:embed openapi/openapi.yaml
var openapiYAML []byte

// OpenAPI is the API's OpenAPI 3.1 document as JSON, converted once from
// server/openapi/openapi.yaml (the copy kept in the repository).
var OpenAPI = func() []byte {
	var doc any
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		panic(fmt.Sprintf("server: openapi.yaml: %v", err))
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(fmt.Sprintf("server: openapi.yaml: %v", err))
	}
	return b
}()

func (s *Server) handleOpenAPI() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=300")
		w.Write(OpenAPI)
	})
}

// Routes lists the patterns the server registered ("GET /v1/me").
func (s *Server) Routes() []string { return s.patterns }
