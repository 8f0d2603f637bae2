package server_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestUIChatUntypedFiles: a browser gives many files no type (a .md on
// Windows, a photo from some pickers): useChat sends their part with an
// empty mediaType and FileReader's "data:application/octet-stream" URL.
// coachd reads what such a file is from its bytes, never its name, and
// takes it when it is a kind attachments take; anything else is a 400
// naming the part.
func TestUIChatUntypedFiles(t *testing.T) {
	e := MustChatEnv(t, nil)
	file := func(name, mediaType, url string) string {
		return `{"type":"file","mediaType":` + jsonText(mediaType) + `,"filename":` + jsonText(name) + `,"url":` + jsonText(url) + `}`
	}
	octet := func(b []byte) string {
		return "data:application/octet-stream;base64," + base64.StdEncoding.EncodeToString(b)
	}
	png := pngFile(t)
	t.Run("OK", func(t *testing.T) {
		e.fake.Enqueue(anthropictest.Text("Got them.", 4))
		s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-u", `{"type":"text","text":"look"}`,
			file("shot", "", octet(png)),
			file("plan.pdf", "application/octet-stream", octet(pdfFile)),
			file("notes.md", "", octet([]byte("# Week 3\nrun 5k, rest"))),
			file("cat.png", "", "data:;base64,"+base64.StdEncoding.EncodeToString([]byte("not a picture: text")))))
		if s.status != 200 {
			t.Fatalf("%d %s", s.status, s.errBody.body)
		}
		reqs := e.fake.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%d model requests", len(reqs))
		}
		msgs := reqs[0].Messages()
		kinds, _ := sources(t, msgs[len(msgs)-1].Blocks)
		got := strings.Join(kinds, ",")
		if want := "image:base64:image/png,document:base64:application/pdf,document:text:text/plain,document:text:text/plain,text"; got != want {
			t.Errorf("the user message's blocks: %s, want %s", got, want)
		}
	})
	t.Run("ErrNotAKind", func(t *testing.T) {
		zip := []byte("PK\x03\x04\x14\x00\x00\x00\x08\x00")
		before := len(e.fake.Requests())
		s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-z", `{"type":"text","text":"look"}`,
			file("map.png", "", octet(png)),
			file("archive", "", octet(zip))))
		body := string(s.errBody.body)
		if s.status != 400 || !strings.Contains(body, `messages.parts[2]`) || !strings.Contains(body, `"archive"`) || strings.Contains(body, "map.png") {
			t.Errorf("an untyped file of no kind coachd takes: %d %q", s.status, body)
		}
		if n := len(e.fake.Requests()) - before; n != 0 {
			t.Errorf("a refused file reached the model: %d requests", n)
		}
	})
}
