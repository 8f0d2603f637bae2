package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// TestDatabaseDownAnswersRetryablePG: a request that meets Postgres down
// (connections refused) is told to come back: 503 with Retry-After, in
// each door's own shape (native JSON, the native stream's error event in
// each dialect, OpenAI's error object, useChat's text, seed 000's
// routes), the error retryable wherever the shape says so. Each answered
// 500 internal, retryable false: a client gave up on a restart of a
// second. A bad input, with the server down or up, stays a 400 that is
// not retryable.
func TestDatabaseDownAnswersRetryablePG(t *testing.T) {
	pg := pgtest.NewServer(t)
	e := mustChatEnvDepsOn(t, pg.NewDatabase(t), func(*server.Deps) {}, nil)
	ctx := context.Background()
	do := func(method, path, body string, header ...string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, method, e.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.alice.key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, string(b)
	}
	pg.Stop()
	for _, tc := range []struct {
		name, method, path, body string
		header                   []string
		// want is in the body: the door's code, and retryable where
		// its shape carries it.
		want []string
	}{
		{"NativeJSON", "GET", "/v1/me", "", nil, []string{`"code":"unavailable"`}},
		{"NativeChat", "POST", "/v1/chat", `{"message":"hi"}`, nil, []string{`"code":"unavailable"`}},
		{"NativeStream", "POST", "/v1/chat/stream", `{"message":"hi"}`, nil, []string{`"type":"unavailable"`, `"retryable":true`}},
		{"ASP", "POST", "/v1/chat/stream?protocol=asp", `{"message":"hi"}`, nil, []string{`"code":"unavailable"`, `"retryable":true`}},
		{"Sage", "POST", "/v1/chat/stream?protocol=sage", `{"message":"hi"}`, nil, []string{`"error"`}},
		{"UseChat", "POST", "/v1/chat/stream?protocol=ai-sdk", `{"messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`, nil, []string{"unavailable"}},
		{"OpenAI", "POST", "/v1/chat/completions", `{"model":"coach","messages":[{"role":"user","content":"hi"}]}`, nil, []string{`"code":"unavailable"`}},
		{"SessionStream", "GET", "/v1/sessions/sess_01hzzzzzzzzzzzzzzzzzzzzzzz/stream", "", []string{"Last-Event-ID", "1:3"}, []string{`"type":"unavailable"`, `"retryable":true`}},
		{"SeedPreflight", "POST", "/v1/chat/preflight", `{"message":"hi"}`, nil, []string{`"code":"unavailable"`}},
		{"SeedToolSchema", "GET", "/v1/tools/schema", "", nil, []string{`"code":"unavailable"`}},
		{"SeedNotes", "GET", "/v1/notes", "", nil, []string{`"code":"unavailable"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := do(tc.method, tc.path, tc.body, tc.header...)
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
				t.Errorf("status %d, Retry-After %q, want 503 with Retry-After\n%s", resp.StatusCode, resp.Header.Get("Retry-After"), body)
			}
			for _, w := range tc.want {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %s:\n%s", w, body)
				}
			}
			if strings.Contains(body, "sql") || strings.Contains(body, "dial") || strings.Contains(body, "127.0.0.1") {
				t.Errorf("the body tells the database's failure:\n%s", body)
			}
		})
	}
	pg.Start(t)
	t.Run("BadInputNotRetryable", func(t *testing.T) {
		resp, body := do("POST", "/v1/chat/stream", `{"message":""}`)
		var ev struct {
			Retryable bool `json:"retryable"`
		}
		if _, data, ok := strings.Cut(body, "data: "); ok {
			json.Unmarshal([]byte(strings.SplitN(data, "\n", 2)[0]), &ev)
		}
		if resp.StatusCode != http.StatusBadRequest || ev.Retryable {
			t.Errorf("an empty message: status %d, retryable %v\n%s", resp.StatusCode, ev.Retryable, body)
		}
	})
}

// TestSessionStreamWhileDatabaseDownPG: a client that reconnected with
// Last-Event-ID to a turn running on another replica, when Postgres
// goes down, gets an error event in its route's dialect that says
// retryable and carries the last event id it had; its stream ended with
// no event.
func TestSessionStreamWhileDatabaseDownPG(t *testing.T) {
	pg := pgtest.NewServer(t)
	e := mustChatEnvDepsOn(t, pg.NewDatabase(t), func(*server.Deps) {}, nil)
	ctx := context.Background()
	for _, tc := range []struct{ protocol, want string }{
		{"coachd", `"type":"unavailable"`},
		{"asp", `"code":"unavailable"`},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			if tc.protocol != "coachd" {
				pg.Start(t)
			}
			sid := e.session(e.alice)
			// What a turn running on another replica has logged so far.
			turn, err := e.db.BeginTurn(ctx, e.alice.ID, sid, "proc_elsewhere", 20)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.db.AppendEvents(ctx, e.alice.ID, sid, turn, []coachd.Event{
				{Turn: turn, Seq: 1, Type: coachd.EventTurnStarted, SessionID: sid},
				{Turn: turn, Seq: 2, Type: coachd.EventTextDelta, Text: "Halfway"},
			}, false); err != nil {
				t.Fatal(err)
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", e.url+"/v1/sessions/"+sid+"/stream?protocol="+tc.protocol, nil)
			req.Header.Set("Authorization", "Bearer "+e.alice.key)
			req.Header.Set("Last-Event-ID", fmt.Sprintf("%d:1", turn))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			br := bufio.NewReader(resp.Body)
			var rest strings.Builder
			for {
				line, err := br.ReadString('\n')
				if err != nil {
					t.Fatalf("the stream ended before the turn's text: %v", err)
				}
				if strings.Contains(line, "Halfway") {
					break
				}
			}
			pg.Stop()
			io.Copy(&rest, br)
			wantID := fmt.Sprintf("%d:2", turn)
			if !strings.Contains(rest.String(), tc.want) || !strings.Contains(rest.String(), `"retryable":true`) || !strings.Contains(rest.String(), wantID) {
				t.Errorf("after the database went down the stream said:\n%s\nwant a retryable unavailable error naming %s", rest.String(), wantID)
			}
		})
	}
	pg.Start(t)
}
