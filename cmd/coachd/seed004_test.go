package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// needNode finds node, or skips (fails on CI, where .ci/run installs it).
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node is required on CI")
		}
		t.Skip("needs node to play a seed's own client")
	}
	return node
}

// seedRun is what a seed's Node client printed.
type seedRun struct {
	Status          int               `json:"status"`
	SessionID       string            `json:"session_id"`
	Response        string            `json:"response"`
	Events          []string          `json:"events"`
	FunctionResults []json.RawMessage `json:"function_results"`
	Navigations     []string          `json:"navigations"`
	Error           string            `json:"error"`
	ErrorData       map[string]any    `json:"error_data"`
}

func runNode(t *testing.T, node, script string, args ...string) seedRun {
	t.Helper()
	cmd := exec.Command(node, append([]string{filepath.Join("testdata", "seeds", script)}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, out)
	}
	var r seedRun
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("node output %s: %v", out, err)
	}
	return r
}

// fitnessApp is seed 004's app behind the fitness pack's webhook tools.
func fitnessApp(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch filepath.Base(r.URL.Path) {
		case "search_workout_library":
			io.WriteString(w, "Found these workouts:\n1. Leg Day (ID: w1)\n2. Lower Body Blast (ID: w2)")
		case "navigate_to_page":
			io.WriteString(w, `{"action": "navigate", "page": "library"}`)
		default:
			http.Error(w, "Unable to connect to the service.", http.StatusBadGateway)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestSeed004Client plays seed 004's fetch reader, under Node, against
// the real binary serving examples/fitness.
func TestSeed004Client(t *testing.T) {
	node := needNode(t)
	fake := anthropictest.NewServer()
	defer fake.Close()
	app := fitnessApp(t)
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "FITNESS_API_URL=" + app.URL},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", filepath.Join("..", "..", "examples", "fitness"), "--demo",
		"--webhook-allow", "127.0.0.1/32", "--monthly-messages", "5", "--rate-limit", "off")
	send := func(msg, session string) seedRun {
		return runNode(t, node, "seed004-client.mjs", p.url, p.key, msg, session)
	}

	t.Log("the pack's note vocabulary")
	for body, want := range map[string]int{
		`{"note_type":"injury","category":"recovery","title":"Left knee","content":"Sore after squats"}`: 201,
		`{"note_type":"market_update","title":"x","content":"y"}`:                                        400,
	} {
		req, _ := http.NewRequest("POST", p.url+"/v1/notes", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: %d, want %d", body, resp.StatusCode, want)
		}
	}
	var tl struct {
		Tools []struct {
			Name        string
			InputSchema json.RawMessage `json:"input_schema"`
		}
	}
	getJSON(t, p.url+"/v1/tools", p.key, &tl)
	for _, tool := range tl.Tools {
		if tool.Name == "save_note" && !strings.Contains(string(tool.InputSchema), `"injury"`) {
			t.Errorf("save_note's schema lacks the pack's types: %s", tool.InputSchema)
		}
	}

	t.Log("happy path")
	fake.Enqueue(anthropictest.Text("Three sessions this week: legs, push, pull.", 8))
	r := send("plan my week", "")
	if r.Status != 200 || r.Error != "" || r.Response != "Three sessions this week: legs, push, pull." || !strings.HasPrefix(r.SessionID, "sess_") ||
		r.Events[0] != "message_start" || r.Events[len(r.Events)-1] != "message_end" {
		t.Fatalf("happy path: %+v", r)
	}
	sid := r.SessionID

	t.Log("tools, navigation included")
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Let me look. ", 6), anthropictest.ToolUse("toolu_s", "search_workout_library", `{"query":"leg day"}`)),
		anthropictest.Blocks(anthropictest.ToolUse("toolu_n", "navigate_to_page", `{"page":"library"}`)),
		anthropictest.Text("Leg Day fits.", 4))
	r = send("find me a leg workout", sid)
	var found struct{ ToolUseID, Name, Result string }
	if len(r.FunctionResults) != 2 || json.Unmarshal(r.FunctionResults[0], &found) != nil || !strings.Contains(found.Result, "Leg Day (ID: w1)") ||
		!slices.Equal(r.Navigations, []string{"/library"}) || r.SessionID != sid || !strings.HasSuffix(r.Response, "Leg Day fits.") {
		t.Fatalf("tools: %+v", r)
	}

	t.Log("a tool error is the seed's error object")
	fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_c", "add_workout_to_calendar", `{"workout_id":"w1","date":"2026-11-24"}`)),
		anthropictest.Text("The calendar is unreachable right now.", 6))
	r = send("add it tomorrow", sid)
	var failed struct{ Result string }
	var obj struct {
		Error   bool   `json:"error"`
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	if len(r.FunctionResults) != 1 || json.Unmarshal(r.FunctionResults[0], &failed) != nil || json.Unmarshal([]byte(failed.Result), &obj) != nil ||
		!obj.Error || obj.Code != "execution_error" || !strings.Contains(obj.Message, "HTTP 502") || r.Error != "" {
		t.Fatalf("tool error: %+v (%+v)", r, obj)
	}

	t.Log("a mid-stream upstream error ends the stream")
	fake.Enqueue(anthropictest.Text("Here is a long answer that breaks", 4).ErrorAfter(4, "overloaded_error", "Overloaded"))
	r = send("and next week?", sid)
	if r.Error == "" || r.Events[len(r.Events)-1] != "error" || slices.Contains(r.Events, "message_end") || r.ErrorData["type"] != "rate_limit" {
		t.Fatalf("mid-stream error: %+v", r)
	}

	t.Log("a limit stop: the round limit ends the turn with message_end")
	for i := range 7 {
		fake.Enqueue(anthropictest.Blocks(anthropictest.ToolUse("toolu_l"+string(rune('a'+i)), "search_workout_library", `{"query":"more"}`)))
	}
	r = send("keep searching", sid)
	if r.Error != "" || r.Events[len(r.Events)-1] != "message_end" || len(r.FunctionResults) != 6 {
		t.Fatalf("round limit: %+v", r)
	}

	t.Log("a pre-stream error reaches the reader: the monthly limit, with usage and limit")
	before := len(fake.Requests())
	r = send("one more", sid)
	if r.Status != 429 || !slices.Equal(r.Events, []string{"error"}) || r.ErrorData["type"] != "rate_limit_exceeded" ||
		r.ErrorData["usage"] != 5.0 || r.ErrorData["limit"] != 5.0 || !strings.Contains(r.Error, "Monthly message limit (5)") {
		t.Fatalf("limit: %+v", r)
	}
	if len(fake.Requests()) != before {
		t.Fatal("the refused turn reached the model")
	}
}
