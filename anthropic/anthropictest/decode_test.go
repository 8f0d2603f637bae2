package anthropictest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/coachd/coachd"
)

// sameRequest compares what the decoder fills; a raw part that is JSON
// null counts as absent, as contentBlocks reads it.
func sameRequest(a, b *wireRequest) bool {
	raw := func(x, y json.RawMessage) bool {
		norm := func(r json.RawMessage) []byte {
			if string(r) == "null" {
				return nil
			}
			return r
		}
		return bytes.Equal(norm(x), norm(y))
	}
	if a.Model != b.Model || a.Stream != b.Stream || !reflect.DeepEqual(a.MaxTokens, b.MaxTokens) ||
		!reflect.DeepEqual(a.Thinking, b.Thinking) || !raw(a.System, b.System) ||
		len(a.Tools) != len(b.Tools) || len(a.Messages) != len(b.Messages) {
		return false
	}
	for i := range a.Tools {
		if !bytes.Equal(a.Tools[i], b.Tools[i]) {
			return false
		}
	}
	for i := range a.Messages {
		if a.Messages[i].Role != b.Messages[i].Role || !raw(a.Messages[i].Content, b.Messages[i].Content) {
			return false
		}
	}
	return true
}

func checkDecode(t *testing.T, body []byte) {
	t.Helper()
	var got, want wireRequest
	gerr := decodeRequest(body, &got)
	werr := json.Unmarshal(body, &want)
	if (gerr == nil) != (werr == nil) || gerr != nil && gerr.Error() != werr.Error() {
		t.Fatalf("decodeRequest(%q): error %v, want %v", body, gerr, werr)
	}
	if werr == nil && !sameRequest(&got, &want) {
		t.Fatalf("decodeRequest(%q) = %+v, want %+v", body, got, want)
	}
}

var decodeSeeds = []string{
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"stream":true}`,
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":[{"type":"text","text":"a"}]}],"system":[{"type":"text","text":"s"}],"tools":[{"name":"x"}],"metadata":{"user_id":"u"}}`,
	`{"Model":"m","max_tokens":5}`,
	`{"model":"m","model":"n"}`,
	`{"mod\u0065l":"m"}`,
	`{"max_tokens":"5"}`, `{"max_tokens":1e3}`, `{"max_tokens":-0}`, `{"max_tokens":99999999999999999999}`,
	`{"stream":1}`, `{"stream":null,"model":null,"messages":null,"tools":null,"system":null}`,
	`{"thinking":{"type":"enabled","budget_tokens":2048}}`, `{"thinking":{"TYPE":"enabled"}}`, `{"thinking":5}`,
	`{"messages":[null]}`, `{"messages":[{"ROLE":"user"}]}`, `{"messages":[{"role":5}]}`, `{"messages":{}}`,
	`{"messages":[{"role":"user","role":"assistant"}]}`, `{"tools":{}}`, `{"tools":[1, "x" , null]}`,
	` { "model" : "m\u00e9" } `, `[]`, `null`, `{`, `{"model":"m"}x`, `"x"`,
	"{\"ſtream\":true}", "{\"model\":\"\xff\"}",
}

// TestDecodeRequestMatchesUnmarshal: the fast decoder fills what
// json.Unmarshal fills and fails as it fails, on the seeds and the
// captured coachd requests.
func TestDecodeRequestMatchesUnmarshal(t *testing.T) {
	for _, s := range decodeSeeds {
		checkDecode(t, []byte(s))
	}
	files, _ := filepath.Glob("testdata/coach_*.json")
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		checkDecode(t, raw)
		var req wireRequest
		if !quickRequest(raw, &req) {
			t.Errorf("%s takes the slow path", f)
		}
	}
}

// FuzzDecodeRequest: decodeRequest is json.Unmarshal on any input.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkDecode(t, body) })
}

func checkPeek(t *testing.T, raw []byte) {
	t.Helper()
	h, _, ok := peekBlock(raw, nil)
	if !ok {
		return // the decoder decides
	}
	var b coachd.Block
	if err := json.Unmarshal(raw, &b); err != nil {
		t.Fatalf("peekBlock(%q) accepted a block the decoder refuses: %v", raw, err)
	}
	want := blockHead{typ: b.Type}
	switch b.Type {
	case coachd.BlockToolUse:
		want.id = b.ID
	case coachd.BlockToolResult:
		want.toolUseID = b.ToolUseID
	}
	if h != want {
		t.Fatalf("peekBlock(%q) = %+v, want %+v", raw, h, want)
	}
}

var peekSeeds = []string{
	`{"type":"text","text":"hi"}`,
	`{"type":"tool_use","id":"toolu_1","name":"save_note","input":{"a":1}}`,
	`{"type":"tool_result","tool_use_id":"toolu_\u0031","content":"x","is_error":true,"cache_control":{"type":"ephemeral"}}`,
	`{"type":"tool_result","tool_use_id":null,"content":[{"type":"text","text":"x"}]}`,
	`{"type":"text","text":5}`, `{"type":"text","is_error":"x"}`, `{"type":""}`, `{"type":null}`, `{"text":"x"}`,
	`{"type":"text","type":"tool_use"}`, `{"typ\u0065":"text"}`, `{"type":"tool_use","id":{"x":1}}`,
	`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}`,
	`{"type":"thinking","thinking":"t","signature":"s"}`, `{"type":"x","extra":[1]}`, `null`, `"text"`, `[]`,
}

// TestPeekBlock: a block peekBlock reads is one coachd.Block decodes, to
// the same type and ids; the captured coachd requests are all read by it.
func TestPeekBlock(t *testing.T) {
	for _, s := range peekSeeds {
		checkPeek(t, []byte(s))
	}
	files, _ := filepath.Glob("testdata/coach_*.json")
	for _, f := range files {
		raw, _ := os.ReadFile(f)
		req, err := parseRequest(raw, false)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, m := range req.Messages {
			for _, b := range m.blocks {
				checkPeek(t, b)
				if _, _, ok := peekBlock(b, nil); !ok {
					t.Errorf("%s: block %s is decoded whole", f, b)
				}
			}
		}
	}
}

// FuzzPeekBlock: see TestPeekBlock.
func FuzzPeekBlock(f *testing.F) {
	for _, s := range peekSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if json.Valid(raw) {
			checkPeek(t, raw)
		} else {
			peekBlock(raw, nil)
		}
	})
}
