package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSeed004ReconnectDuringFunction: seed 004's stream drops while a
// function runs (after function_call, before its function_result), and
// the client creates a new request, as the seed says. The function was
// cut by the client leaving, a second in: the coach must not be told it
// hit the 30 s function timeout the seed documents ("[30s timeout] →
// function_result (error)"), or it tells the user the workout library
// timed out.
func TestSeed004ReconnectDuringFunction(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	arrived := make(chan struct{}, 1)
	// The fitness app's search answers only once the caller gives up.
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer app.Close()
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL(), "FITNESS_API_URL=" + app.URL},
		"--db", filepath.Join(t.TempDir(), "c.db"), "--pack", filepath.Join("..", "..", "examples", "fitness"), "--demo",
		"--webhook-allow", "127.0.0.1/32", "--rate-limit", "off")
	fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Let me look. ", 6), anthropictest.ToolUse("toolu_s", "search_workout_library", `{"query":"leg day"}`)),
		anthropictest.Text("Leg Day fits.", 6))

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream", strings.NewReader(`{"message":"find me a leg workout","session_id":null}`))
	req.Header.Set("Authorization", "Bearer "+p.key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	sid, event := seed004ReadUntil(resp.Body, "function_call")
	if sid == "" || event != "function_call" {
		t.Fatalf("first stream: session %q, last event %q", sid, event)
	}
	<-arrived // the function runs
	resp.Body.Close()
	tr.CloseIdleConnections()

	// One new request, as the seed's client makes: the turn it finds
	// still running (the server may not have seen the client go) is the
	// message's own, which it stops and runs again.
	status, _, body := post(t, p.url+"/v1/chat/stream", p.key, `{"message":"find me a leg workout","session_id":"`+sid+`"}`)
	if status != 200 || !strings.Contains(string(body), "event: message_end") {
		t.Fatalf("the new request: %d %s", status, body)
	}
	reqs := fake.Requests()
	var told string
	for _, b := range reqs[len(reqs)-1].ToolResults() {
		if b.ToolUseID == "toolu_s" {
			told = b.ResultText()
		}
	}
	if told == "" || strings.Contains(told, "within 30s") || !strings.Contains(told, "interrupted") {
		t.Fatalf("the coach was told the cut function's result was %q, want it interrupted (no timeout was reached)", told)
	}
}
