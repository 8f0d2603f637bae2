package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMCPPipedRequests: a script pipes its requests into `coachd mcp`
// and closes stdin (`… | coachd mcp`): each request read before the end
// is answered, the note saved, and then coachd mcp exits 0. It exited
// at once, the requests still under way unanswered (tools/list and the
// call here): at the end of its input the SDK cancelled them and wrote
// nothing more.
func TestMCPPipedRequests(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "coachd.db")
	key := mustCreateRichUser(t, dbPath, "ada")
	p := MustServe(t, map[string]string{"COACHD_DB": dbPath}, "--addr", "127.0.0.1:0")
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"script","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"save_note","arguments":{"note_type":"preference","title":"Mornings","content":"Ada drives best before 9am."}}}`,
	}, "\n") + "\n"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if err := runMCP(ctx, []string{"--url", p.url}, getenvFrom(map[string]string{"COACHD_KEY": key}), strings.NewReader(in), &stdout, &stderr); err != nil || ctx.Err() != nil {
		t.Fatalf("coachd mcp: %v (ctx %v, stderr %s)", err, ctx.Err(), stderr.String())
	}
	answered := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var a struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if line == "" || json.Unmarshal([]byte(line), &a) != nil || len(a.ID) == 0 {
			continue
		}
		answered[string(a.ID)] = string(a.Result)
		if a.Error != nil {
			answered[string(a.ID)] = "error " + string(a.Error)
		}
	}
	for id, want := range map[string]string{"1": `"protocolVersion"`, "2": `"save_note"`, "3": `"content"`} {
		if got, ok := answered[id]; !ok || !strings.Contains(got, want) || strings.HasPrefix(got, "error") || strings.Contains(got, `"isError":true`) {
			t.Errorf("answer to request %s = %q (present %v); want it with %s\nstdout:\n%s", id, got, ok, want, stdout.String())
		}
	}
}
