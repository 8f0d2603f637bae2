package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/agent"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/tools"
)

// packServer serves the sage example pack (no model calls are made).
func packServer(t *testing.T) (url, key string) {
	t.Helper()
	ctx := context.Background()
	db := mustDB(t, filepath.Join(t.TempDir(), "c.db"), nil)
	p, err := agent.LoadPack(filepath.Join("..", "examples", "sage"), agent.PackOptions{Builtins: tools.Builtins()})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := agent.NewToolset(tools.ForPack(p, p.FileTypes())...)
	if err != nil {
		t.Fatal(err)
	}
	r := agent.NewRunner(agent.Config{Store: db, Tools: ts, Agents: p.Agent})
	srv := httptest.NewServer(server.New(server.Deps{Store: db, Runner: r, Pack: p}))
	t.Cleanup(srv.Close)
	key, err = server.CreateUser(ctx, db, &coachd.User{Name: "ada"})
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL, key
}

func call(t *testing.T, method, url, key, body string, out any) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if out != nil {
		if err := json.Unmarshal(buf.Bytes(), out); err != nil {
			t.Fatalf("%s: %v", buf.String(), err)
		}
	}
	return resp.StatusCode
}

func TestPackRoutes(t *testing.T) {
	url, key := packServer(t)
	t.Run("Agents", func(t *testing.T) {
		var out struct {
			Agents []struct {
				Name    string
				Default bool
				Skills  []string
				Arcs    []string
			}
		}
		if st := call(t, "GET", url+"/v1/agents", key, "", &out); st != 200 || len(out.Agents) != 1 || !out.Agents[0].Default ||
			len(out.Agents[0].Skills) != 10 || len(out.Agents[0].Arcs) != 2 {
			t.Fatalf("%d %+v", st, out)
		}
	})
	t.Run("Skills", func(t *testing.T) {
		var out struct {
			Skills []struct{ Name, Summary string }
		}
		if st := call(t, "GET", url+"/v1/skills", key, "", &out); st != 200 || len(out.Skills) != 10 || out.Skills[0].Summary == "" {
			t.Fatalf("%d %+v", st, out)
		}
	})
	t.Run("SkillsSnakeCase", func(t *testing.T) {
		var out struct {
			Skills []struct{ When json.RawMessage }
		}
		call(t, "GET", url+"/v1/skills", key, "", &out)
		var all string
		for _, sk := range out.Skills {
			all += string(sk.When)
		}
		if !strings.Contains(all, `"time_of_day":`) || strings.Contains(all, "TimeOfDay") || strings.Contains(all, `"Mode"`) {
			t.Fatalf("skill rules are not snake_case: %s", all)
		}
	})
	t.Run("SessionAgent", func(t *testing.T) {
		// The pack's default agent, not "default", which the pack lacks.
		var sess coachd.Session
		if st := call(t, "POST", url+"/v1/sessions", key, `{}`, &sess); st != 201 || sess.Agent != "sage" {
			t.Fatalf("%d %+v", st, sess)
		}
		if st := call(t, "POST", url+"/v1/sessions", key, `{"agent":"nosuch"}`, nil); st != 400 {
			t.Fatalf("unknown agent: %d", st)
		}
	})
	t.Run("ErrUnauthenticated", func(t *testing.T) {
		if st := call(t, "GET", url+"/v1/agents", "wrong", "", nil); st != 401 {
			t.Fatalf("status %d", st)
		}
	})
}

type actionResult struct {
	OK         bool            `json:"ok"`
	Error      string          `json:"error"`
	ActionType string          `json:"action_type"`
	Validated  json.RawMessage `json:"validated"`
	Details    []coachd.FieldError
}

func TestActionValidate(t *testing.T) {
	url, key := packServer(t)
	t.Run("OK", func(t *testing.T) {
		var out actionResult
		st := call(t, "POST", url+"/v1/actions/validate", key, `{"action_type":"SAVE_NOTE","payload":{"note_type":"preference","title":"Test","content":"Test content"}}`, &out)
		if st != 200 || !out.OK || out.ActionType != "SAVE_NOTE" || !strings.Contains(string(out.Validated), "Test content") {
			t.Fatalf("%d %+v", st, out)
		}
	})
	t.Run("ValidationError", func(t *testing.T) {
		var out actionResult
		st := call(t, "POST", url+"/v1/actions/validate", key, `{"action_type":"SAVE_NOTE","payload":{"note_type":"preference","content":"x"}}`, &out)
		if st != 200 || out.OK || out.Error != "VALIDATION_ERROR" || len(out.Details) == 0 || out.Details[0].Code != "invalid_type" {
			t.Fatalf("%d %+v", st, out)
		}
	})
	t.Run("UnknownAction", func(t *testing.T) {
		var out actionResult
		call(t, "POST", url+"/v1/actions/validate", key, `{"action_type":"ZONE_INTEL","payload":{}}`, &out)
		if out.OK || out.Details[0].Code != "unknown_action" {
			t.Fatalf("%+v", out)
		}
	})
	t.Run("Batch", func(t *testing.T) {
		var out struct {
			OK      bool
			Results []actionResult
		}
		st := call(t, "POST", url+"/v1/actions/validate/batch", key, `{"actions":[
			{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C"}},
			{"action_type":"SAVE_FILE","payload":{"file_type":"nope","content":"x"}}]}`, &out)
		if st != 200 || out.OK || len(out.Results) != 2 || !out.Results[0].OK || out.Results[1].OK {
			t.Fatalf("%d %+v", st, out)
		}
	})
	t.Run("BadActionType", func(t *testing.T) {
		// A failed validation in seed 001's shape, as any other field's.
		var out actionResult
		st := call(t, "POST", url+"/v1/actions/validate", key, `{"action_type":"save note"}`, &out)
		if st != 200 || out.OK || out.Error != "VALIDATION_ERROR" || len(out.Details) != 1 || out.Details[0].Code != "unknown_action" {
			t.Fatalf("%d %+v", st, out)
		}
	})
	t.Run("ErrBadRequest", func(t *testing.T) {
		if st := call(t, "POST", url+"/v1/actions/validate", key, `{"action_type":5}`, nil); st != 400 {
			t.Fatalf("status %d", st)
		}
	})
	t.Run("Schemas", func(t *testing.T) {
		var out struct {
			Schemas map[string]struct {
				Tool        string
				InputSchema json.RawMessage `json:"input_schema"`
			}
		}
		call(t, "GET", url+"/v1/actions/schemas", key, "", &out)
		if out.Schemas["SAVE_NOTE"].Tool != "save_note" || out.Schemas["SAVE_FILE"].InputSchema == nil {
			t.Fatalf("%+v", out)
		}
		if _, ok := out.Schemas["SHOW_OPTIONS"]; ok {
			t.Fatal("interactive tools are not actions")
		}
	})
}
