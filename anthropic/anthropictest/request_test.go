package anthropictest_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestScriptSees: a script reads the request through its methods whether
// or not the fake records; Body and a copy of the headers only while it
// records.
func TestScriptSees(t *testing.T) {
	body := `{"model":"m","max_tokens":5,"stream":false,
		"tools":[{"name":"list_notes","input_schema":{}},{"n\u0061me":"save_note","input_schema":{"type":"object"}}],
		"messages":[{"role":"user","content":"first"},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"save_note","input":{"a":1}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ok"},{"type":"text","text":"and "},{"type":"text","text":"then"}]}]}`
	for _, record := range []bool{true, false} {
		srv := anthropictest.NewServer()
		srv.SetRecording(record)
		type seen struct {
			body                      bool
			saveNote, other, mystery  bool
			last, key                 string
			results, messages, blocks int
		}
		var got seen
		srv.SetScript(func(req *anthropictest.Request) anthropictest.Reply {
			msgs := req.Messages()
			got = seen{body: req.Body != nil, saveNote: req.HasTool("save_note"), other: req.HasTool("list_notes"),
				mystery: req.HasTool("mystery"), last: req.LastUserText(), key: req.Header.Get("x-api-key"),
				results: len(req.ToolResults()), messages: len(msgs), blocks: len(msgs[2].Blocks)}
			msgs[2].Blocks[0].Type = "changed" // a caller's copy
			return anthropictest.Text("fine", 0)
		})
		if code, _, b := post(t, srv, "/v1/messages", body, nil); code != 200 {
			t.Fatalf("recording %v: %d %s", record, code, b)
		}
		want := seen{body: record, saveNote: true, other: true, last: "and then", key: "k", results: 1, messages: 3, blocks: 3}
		if got != want {
			t.Errorf("recording %v: script saw %+v, want %+v", record, got, want)
		}
		reqs := srv.Requests()
		if record {
			if len(reqs) != 1 || reqs[0].Body["model"] != "m" || reqs[0].Header.Get("anthropic-version") != "2023-06-01" {
				t.Fatalf("recorded %+v", reqs)
			}
			m := reqs[0].Messages()
			if m[2].Blocks[0].Type != coachd.BlockToolResult || m[1].Blocks[0].ID != "toolu_1" || !strings.Contains(string(m[1].Blocks[0].Input), `"a":1`) {
				t.Errorf("recorded messages %+v", m)
			}
		} else if len(reqs) != 0 {
			t.Errorf("recorded %d requests with recording off", len(reqs))
		}
		srv.Close()
	}
}
