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
		var old, got oaiRequest
		decodeLikeWhole(t, body, &old, &got, func() int { return len(old.Messages) },
			func() error {
				return decodeOAIRequest(httptest.NewRequest("POST", "/v1/chat/completions", strings.NewReader(body)), &got)
			},
			func() {
				for i := range len(old.Messages) - 1 {
					old.Messages[i].Content.dropData()
				}
				if len(old.Messages) == 0 && len(got.Messages) == 0 {
					old.Messages, got.Messages = nil, nil // [] and none read alike
				}
			})
	})
}

// decodeLikeWhole checks a decoder that reads a body a message at a time
// (decode, into got) against decodeForeign's read of the whole body (into
// old): it takes what the whole read takes and refuses nothing a turn
// would have run for (messages is old's count); a NUL refused by both is
// named alike; and, once like makes the messages it keeps comparable,
// both decoded the same.
func decodeLikeWhole[T any](t *testing.T, body string, old, got *T, messages func() int, decode func() error, like func()) {
	oldErr := json.Unmarshal([]byte(body), old)
	if oldErr == nil {
		oldErr = noNUL([]byte(body))
	}
	err := decode()
	switch {
	case err != nil && oldErr == nil:
		if messages() > 0 {
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
	like()
	if !reflect.DeepEqual(old, got) {
		t.Fatalf("decoded\n%+v\nwas\n%+v", got, old)
	}
}

// FuzzUIDecode: decodeUIChatRequest, which reads useChat's body a message
// at a time, takes what decodeForeign (encoding/json and noNUL on the
// whole body) takes and decodes it the same, but that it keeps the last
// message only; it refuses nothing the whole-body read would have run a
// turn for.
func FuzzUIDecode(f *testing.F) {
	for _, s := range []string{
		`{"id":"c1","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hi"}]}]}`,
		`{"id":"c","messages":[{"id":"u","role":"user","parts":[{"type":"file","mediaType":"image/png","url":"data:image/png;base64,AAAA","filename":"a.png"}]},{"id":"a","role":"assistant","parts":[{"type":"step-start"},{"type":"tool-ask","toolCallId":"t1","state":"output-available","output":{"ok":true}}]},{"role":"assistant","parts":[{"type":"tool-ask","toolCallId":"t1","state":"approval-responded","approval":{"approved":false,"reason":"no"}}]}],"trigger":"submit-message","agent":"coach"}`,
		`{"Messages":[{"role":"user","parts":[]}],"ID":"a","id":"b"}`,
		`{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"a\u0000b"}]}]}`,
		`{"messages":[{"role":"user"}],"messages":null}`,
		`{"messages":[{"role":"user"}],"messages":[]}`,
		`{"messages":[{"role":"user","parts":[{"output":1e999}]}]} `,
		`{"messages":[1]}`,
		`{"id":"a"} {}`,
		`null`,
		`[]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var old, got uiChatRequest
		decodeLikeWhole(t, body, &old, &got, func() int { return len(old.Messages) },
			func() error {
				return decodeUIChatRequest(httptest.NewRequest("POST", "/v1/chat/stream?protocol=ai-sdk", strings.NewReader(body)), &got)
			},
			func() {
				if n := len(old.Messages); n > 0 {
					old.earlier = n - 1 // counted, not kept
					for _, m := range old.Messages[:n-1] {
						if m.Role == "user" {
							old.users++ // counted, not kept
						}
					}
					old.Messages = old.Messages[n-1:]
				} else {
					old.Messages, got.Messages, got.users, got.earlier = nil, nil, 0, 0 // [], null and none read alike
				}
			})
	})
}
