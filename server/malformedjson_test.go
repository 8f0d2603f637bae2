package server_test

import (
	"net/http"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
)

// TestMalformedJSONDetails: a body that is not well-formed JSON (cut
// short, a syntax error, trailing data, empty, not an object) was a 400
// with no details, at the top or nested deep, where every other bad input
// carries a detail with a field and a code. Each now carries one: the
// value the JSON broke in ("" for the body as a whole), and a code.
func TestMalformedJSONDetails(t *testing.T) {
	e := mustChatEnvOn(t, filepath.Join(t.TempDir(), "coachd.db"))
	sess := e.MustSession(e.alice)
	note := e.MustNote(e.alice, "Airport")
	record := `{"session_id":"` + sess.ID + `","messages":[{"role":"user","content_blocks":[{"type":"text","text":"x"`
	for _, tt := range []struct {
		name, method, path, body string
		field, code              string
	}{
		{"Empty", "POST", "/v1/notes", " ", "", "required"},
		{"Truncated", "POST", "/v1/notes", `{"note_type":"tip"`, "", "json"},
		{"TruncatedValue", "POST", "/v1/notes", `{"note_type":`, "note_type", "json"},
		{"TruncatedNested", "POST", "/v1/notes", `{"note_type":"tip","importance":{"x":`, "importance.x", "json"},
		{"TruncatedDeep", "POST", "/v1/chat/record", record, "messages[0].content_blocks[0]", "json"},
		{"SyntaxTop", "PUT", "/v1/notes/" + note.ID, `{"title" "x"}`, "title", "json"},
		{"SyntaxArray", "POST", "/v1/notes", `{"note_type":"tip","importance":[1,}`, "importance", "json"},
		{"SyntaxDeep", "POST", "/v1/actions/validate/batch", `{"actions":[{"action_type":"SAVE_NOTE","payload":{"title":tru}}]}`, "actions[0].payload.title", "json"},
		{"SyntaxStream", "POST", "/v1/chat/stream", `{"message":"hi","attachments":[{"type":"image",}]}`, "attachments[0]", "json"},
		{"SyntaxToolInput", "POST", "/v1/tools/execute", `{"tool_name":"save_note","tool_input":{"title":'x'}}`, "tool_input.title", "json"},
		{"Trailing", "POST", "/v1/sessions", `{} {}`, "", "json"},
		{"NotAnObject", "PATCH", "/v1/users/" + e.bob.ID, `[]`, "", "type"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := e.alice.key
			if tt.method == "PATCH" {
				key = adminKey
			}
			r := e.do(request{method: tt.method, path: tt.path, key: key, body: tt.body,
				header: map[string]string{"Content-Type": "application/json", "Accept": "application/json"}})
			if r.status != http.StatusBadRequest || r.errorCode() != coachd.EINVALID {
				t.Fatalf("%d %s, want 400 %s", r.status, r.body, coachd.EINVALID)
			}
			var body struct {
				Error struct {
					Message string
					Details []coachd.FieldError
				}
			}
			mustUnmarshal(t, r.body, &body)
			d := body.Error.Details
			if len(d) != 1 || d[0].Field != tt.field || d[0].Code != tt.code || d[0].String() != body.Error.Message {
				t.Errorf("error %s, want one detail on field %q with code %q that the message reads", r.body, tt.field, tt.code)
			}
		})
	}
}
