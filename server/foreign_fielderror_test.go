package server_test

import (
	"encoding/json"
	"net/http"
	"testing"
)

// TestForeignBodiesNameTheField: a value of the wrong JSON type in an
// OpenAI chat completion body or a useChat body is a 400 naming the field
// and its code, in that door's error shape (OpenAI's param and code;
// useChat's plain text, or coachd's JSON when asked for), not a bare
// "the body must be ..."; an earlier OpenAI message's content too (null,
// missing and parts of other types still read as no text).
func TestForeignBodiesNameTheField(t *testing.T) {
	e := MustChatEnv(t, nil)
	t.Run("OpenAI", func(t *testing.T) {
		for _, c := range []struct{ body, param, code string }{
			{`{"model":"default","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"b"},{"role":"user","content":5}]}`, "messages[2].content", "type"},
			// An earlier message's too: read as no text, it changed the
			// conversation's fingerprint (resends, edits).
			{`{"model":"default","messages":[{"role":"user","content":5},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`, "messages[0].content", "type"},
			{`{"model":"default","messages":[{"role":"user","content":"a"},{"role":"assistant","content":{"text":"b"}},{"role":"user","content":"c"}]}`, "messages[1].content", "type"},
			{`{"model":"default","messages":[{"role":"user","content":[{"type":"text","text":5}]},{"role":"assistant","content":"b"},{"role":"user","content":"c"}]}`, "messages[0].content", "type"},
			{`{"model":"default","messages":[{"role":"user","content":{"text":"a"}}]}`, "messages[0].content", "type"},
			{`{"model":"default","messages":[{"role":"user"}]}`, "messages[0].content", "format"},
			{`{"model":"default","messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`, "messages[0].content", "type"},
			{`{"model":"default","messages":[{"role":"user","content":"a"},{"role":5,"content":"b"},{"role":"user","content":"c"}]}`, "messages[1].role", "type"},
			{`{"model":5,"messages":[{"role":"user","content":"a"}]}`, "model", "type"},
			{`{"model":"default","stream":"yes","messages":[{"role":"user","content":"a"}]}`, "stream", "type"},
			{`{"model":"default","stream_options":{"include_usage":1},"messages":[{"role":"user","content":"a"}]}`, "stream_options.include_usage", "type"},
		} {
			r := e.post(e.alice.key, "/v1/chat/completions", c.body, nil, nil)
			var got struct {
				Error struct{ Message, Type, Param, Code string } `json:"error"`
			}
			json.Unmarshal(r.body, &got)
			if r.status != http.StatusBadRequest || got.Error.Type != "invalid_request_error" || got.Error.Param != c.param || got.Error.Code != c.code ||
				len(got.Error.Message) <= len(c.param) || got.Error.Message[:len(c.param)] != c.param {
				t.Errorf("%s:\n got %d %s, want 400 param %s code %s", c.body, r.status, r.body, c.param, c.code)
			}
		}
	})
	t.Run("AISDK", func(t *testing.T) {
		const first = `{"id":"u0","role":"user","parts":[{"type":"text","text":"a"}]}`
		for _, c := range []struct{ body, field string }{
			{`{"id":"c1","messages":[` + first + `,{"id":"u1","role":"user","parts":[{"type":"text","text":5}]}]}`, "messages[1].parts[0].text"},
			{`{"id":"c1","messages":[{"id":"u1","role":"user","parts":5}]}`, "messages[0].parts"},
			{`{"id":"c1","messages":[` + first + `,{"id":"a1","role":"assistant","parts":[{"type":"tool-x","toolCallId":"t","state":"approval-responded","approval":{"approved":"yes"}}]}]}`, "messages[1].parts[0].approval.approved"},
			{`{"id":5,"messages":[` + first + `]}`, "id"},
		} {
			r := e.do(request{method: "POST", path: "/v1/chat/stream?protocol=ai-sdk", key: e.alice.key, body: c.body,
				header: map[string]string{"Accept": "application/json"}})
			var got struct {
				Error struct {
					Details []struct{ Field, Code string }
				} `json:"error"`
			}
			json.Unmarshal(r.body, &got)
			if r.status != http.StatusBadRequest || len(got.Error.Details) != 1 || got.Error.Details[0].Field != c.field || got.Error.Details[0].Code != "type" {
				t.Errorf("%s:\n got %d %s, want 400 naming %s, code type", c.body, r.status, r.body, c.field)
			}
			// useChat shows the plain text body as the error's message.
			s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", c.body)
			if s.status != http.StatusBadRequest || len(s.raw) <= len(c.field) || string(s.raw[:len(c.field)]) != c.field {
				t.Errorf("%s:\n useChat reads %d %q, want it to name %s", c.body, s.status, s.raw, c.field)
			}
		}
	})
}
