package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestOpenAIUntypedFiles: a file the browser gave no type reaches
// /v1/chat/completions as a file part whose data: URL says
// application/octet-stream (or nothing). Its type is what its bytes are,
// never its name; one of no kind coachd takes is a 400 naming the part.
func TestOpenAIUntypedFiles(t *testing.T) {
	e := MustChatEnv(t, nil)
	body := func(name, url string) string {
		return mustJSON(t, map[string]any{"model": "default", "messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "My shift sheet."},
			map[string]any{"type": "file", "file": map[string]string{"filename": name, "file_data": url}}}}}})
	}
	t.Run("OK", func(t *testing.T) {
		for _, tc := range []struct{ name, url, want string }{
			{"shift", dataURL("application/octet-stream", pdfFile), "document:base64:application/pdf,text"},
			{"notes.md", dataURL("", []byte("# Shift\nairport at 6")), "document:text:text/plain,text"},
		} {
			e.fake.Enqueue(anthropictest.Text("Read it.", 4))
			before := len(e.fake.Requests())
			var c completion
			r := e.post(e.alice.key, "/v1/chat/completions", body(tc.name, tc.url), nil, &c)
			if r.status != 200 {
				t.Fatalf("%s: %d %s", tc.name, r.status, r.body)
			}
			msgs := e.fake.Requests()[before].Messages()
			if kinds, _ := sources(t, msgs[len(msgs)-1].Blocks); strings.Join(kinds, ",") != tc.want {
				t.Errorf("%s: the user message's blocks: %v, want %s", tc.name, kinds, tc.want)
			}
		}
	})
	t.Run("ErrNotAKind", func(t *testing.T) {
		r := e.post(e.alice.key, "/v1/chat/completions", body("archive.pdf", dataURL("application/octet-stream", []byte("PK\x03\x04\x14\x00"))), nil, nil)
		var out struct {
			Error struct {
				Message string
				Param   *string
			}
		}
		json.Unmarshal(r.body, &out)
		if r.status != 400 || out.Error.Param == nil || *out.Error.Param != "messages[0].content[1].file.file_data" {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
}
