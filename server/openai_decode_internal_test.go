package server

import (
	"encoding/json"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
)

// FuzzOAIDecode: decodeOAIRequest, which reads a chat completion request
// a message at a time, takes what decodeForeign (encoding/json and noNUL
// on the whole body) takes and decodes it the same, but for the earlier
// messages' image and file data, which it drops; it refuses nothing the
// whole-body read would have run a turn for.
func FuzzOAIDecode(f *testing.F) {
	for _, s := range []string{
		`{"model":"default","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"m","n":1,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}}]},{"role":"assistant","content":null},{"role":"user","content":[{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,AA"}}]}]}`,
		`{"Messages":[{"role":"user","content":"x"}],"MODEL":"a","model":"b"}`,
		`{"messages":[{"role":"user","content":"a\u0000b"}]}`,
		`{"messages":[{"role":"user","content":"x"}],"messages":null}`,
		`{"tools":[{"type":"function"}],"messages":[]} `,
		`{"messages":[1]}`,
		`{"model":"a"} {}`,
		`null`,
		`[]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var old oaiRequest
		oldErr := json.Unmarshal([]byte(body), &old)
		if oldErr == nil {
			oldErr = noNUL([]byte(body))
		}
		var got oaiRequest
		err := decodeOAIRequest(httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)), &got)
		switch {
		case err != nil && oldErr == nil:
			if len(old.Messages) > 0 {
				t.Fatalf("refused what a turn ran for: %v", err)
			}
			return
		case err == nil && oldErr != nil:
			t.Fatalf("took what was refused (%v)", oldErr)
		case err != nil:
			if nulOld, nulNew := strings.Contains(oldErr.Error(), "NUL"), strings.Contains(err.Error(), "NUL"); nulOld && nulNew && oldErr.Error() != err.Error() {
				t.Fatalf("the NUL names another field: %v, was %v", err, oldErr)
			}
			return
		}
		for i := range len(old.Messages) - 1 {
			old.Messages[i].Content.dropData()
		}
		if len(old.Messages) == 0 && len(got.Messages) == 0 {
			old.Messages, got.Messages = nil, nil // [] and none read alike
		}
		if !reflect.DeepEqual(old, got) {
			t.Fatalf("decoded\n%+v\nwas\n%+v", got, old)
		}
	})
}
