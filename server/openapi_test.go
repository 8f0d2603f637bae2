package server_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// TestOpenAPIRoutes: the document lists exactly the routes the server
// registers, with their methods.
func TestOpenAPIRoutes(t *testing.T) {
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range doc.Paths {
		for method := range item {
			if method != "parameters" {
				documented = append(documented, strings.ToUpper(method)+" "+path)
			}
		}
	}
	s := server.New(server.Deps{Metrics: http.NotFoundHandler()}) // every optional route registered
	served := s.Routes()
	slices.Sort(documented)
	slices.Sort(served)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("served, not in openapi.yaml: %s", r)
		}
	}
	for _, r := range documented {
		if !slices.Contains(served, r) {
			t.Errorf("in openapi.yaml, not served: %s", r)
		}
	}
}

// TestOpenAPIResponses: real answers validate against the document's
// response schemas.
func TestOpenAPIResponses(t *testing.T) {
	e := MustChatEnv(t, nil)
	check, c := openAPIChecker(t)
	key := e.alice.key
	r := e.do(request{method: "GET", path: "/v1/me", key: key})
	check("GET", "/v1/me", "200", r)
	r = e.post(key, "/v1/sessions", `{"title":"t"}`, nil, nil)
	check("POST", "/v1/sessions", "201", r)
	var sess struct{ ID string }
	json.Unmarshal(r.body, &sess)
	check("GET", "/v1/sessions", "200", e.do(request{method: "GET", path: "/v1/sessions", key: key}))
	check("GET", "/v1/sessions/{id}/messages", "200", e.do(request{method: "GET", path: "/v1/sessions/" + sess.ID + "/messages", key: key}))
	r = e.post(key, "/v1/notes", `{"note_type":"tip","title":"T","content":"C"}`, nil, nil)
	check("POST", "/v1/notes", "201", r)
	check("GET", "/v1/notes", "200", e.do(request{method: "GET", path: "/v1/notes", key: key}))
	check("GET", "/v1/tools", "200", e.do(request{method: "GET", path: "/v1/tools", key: key}))
	check("GET", "/v1/users", "200", e.do(request{method: "GET", path: "/v1/users", key: adminKey}))
	check("POST", "/v1/users", "201", e.post(adminKey, "/v1/users", `{"name":"zed"}`, nil, nil))
	check("GET", "/healthz", "200", e.do(request{method: "GET", path: "/healthz"}))
	for _, path := range []string{"/v1/schema", "/v1/schema/tables", "/v1/schema/prompt"} {
		check("GET", path, "200", e.do(request{method: "GET", path: path, key: key}))
	}
	// An error, in the one shape.
	r = e.post(key, "/v1/notes", `{"note_type":"nope"}`, nil, nil)
	if r.status != 400 {
		t.Fatalf("bad note: %d", r.status)
	}
	sch, err := c.Compile("openapi.json#/components/schemas/Error")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
	if err := sch.Validate(v); err != nil {
		t.Errorf("the error does not match Error: %v\n%s", err, r.body)
	}
}

// openAPIChecker returns a check that a response matches the document's
// schema for that route and status, and the compiler it uses.
func openAPIChecker(t *testing.T) (func(method, path, status string, r response), *jsonschema.Compiler) {
	c := jsonschema.NewCompiler()
	var doc any
	if err := json.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	if err := c.AddResource("openapi.json", doc); err != nil {
		t.Fatal(err)
	}
	return func(method, path, status string, r response) {
		t.Helper()
		ptr := strings.NewReplacer("~", "~0", "/", "~1").Replace(path)
		sch, err := c.Compile(fmt.Sprintf("openapi.json#/paths/%s/%s/responses/%s/content/application~1json/schema", ptr, strings.ToLower(method), status))
		if err != nil {
			t.Fatalf("%s %s %s: %v", method, path, status, err)
		}
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(r.body))
		if err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, r.body)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s %s (%d) does not match the document: %v\n%s", method, path, r.status, err, r.body)
		}
	}, c
}
