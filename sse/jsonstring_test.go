package sse

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

func stdJSONString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain words ", "quote \" and \\ backslash", "\n\r\t\b\f\x00\x1f\x7f",
		"<b>&amp;</b>", "héllo wörld 日本語 🚀", "\u2028\u2029", "bad \xff\xfe utf8 \xe2\x80", "\xed\xa0\x80 surrogate"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := coachd.AppendJSONString([]byte("x"), s, false)
		want := append([]byte("x"), stdJSONString(s)...)
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendJSONString(%q, html off) = %s, encoding/json: %s", s, got, want)
		}
	})
}
