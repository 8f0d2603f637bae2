package anthropictest_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/loadtest"
)

// coachRequests are two requests coachd sent the fake in the middle of a
// tool-turn session under `coachd bench` (captured from cmd/coachd's load
// setup): the one that gets the save_note call, and the one carrying its
// result that gets the text answer.
var coachRequests = []string{"coach_tool_call.json", "coach_tool_result.json"}

// BenchmarkReceiveCoachRequest serves one POST /v1/messages as the load
// benchmark does: the load script, recording off, a streamed reply.
//
//	go test ./anthropic/anthropictest -run '^$' -bench ReceiveCoachRequest -benchmem
func BenchmarkReceiveCoachRequest(b *testing.B) {
	for _, name := range coachRequests {
		b.Run(name, func(b *testing.B) {
			raw, err := os.ReadFile("testdata/" + name)
			if err != nil {
				b.Fatal(err)
			}
			fake := anthropictest.New()
			defer fake.Close()
			fake.SetScript(loadtest.ScriptAny(loadtest.Pace{}))
			fake.SetRecording(false)
			h := fake.Handler()
			serve := func() *httptest.ResponseRecorder {
				req := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(raw))
				req.Header.Set("x-api-key", "k")
				req.Header.Set("anthropic-version", "2023-06-01")
				req.Header.Set("content-type", "application/json")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
				return rec
			}
			// The script answers as under load: the call, then the text.
			want := map[string]string{"coach_tool_call.json": `"name":"save_note"`, "coach_tool_result.json": `"text":"word "`}[name]
			if got := serve().Body.String(); !strings.Contains(got, want) {
				b.Fatalf("reply lacks %s:\n%s", want, got)
			}
			b.SetBytes(int64(len(raw)))
			b.ReportAllocs()
			for b.Loop() {
				serve()
			}
		})
	}
}
