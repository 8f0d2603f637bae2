package server_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// uiChatBody is useChat's body for one user message of parts.
func uiChatBody(id string, parts ...string) string {
	return `{"id":` + jsonText(id) + `,"trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[` + strings.Join(parts, ",") + `]}]}`
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestUIChatFileParts: useChat sends the files a user attaches as file
// parts with data URLs ({type: "file", mediaType, url, filename}). They
// reach the model as the message's attachments, as on the coachd
// dialect, instead of being dropped while the text goes on; a URL coachd
// does not fetch, or a type it does not take, is a 400 before any turn.
func TestUIChatFileParts(t *testing.T) {
	e := MustChatEnv(t, nil)
	png := pngFile(t)
	file := func(mediaType, url string) string {
		return `{"type":"file","mediaType":` + jsonText(mediaType) + `,"filename":"shot.png","url":` + jsonText(url) + `}`
	}
	dataURL := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png)
	e.fake.Enqueue(anthropictest.Text("A blank square.", 4))
	note := "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString([]byte("run 5k"))
	s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk",
		uiChatBody("chat-f", `{"type":"text","text":"What is this?"}`, file("image/png", dataURL), file("text/plain", note)))
	if s.status != 200 {
		t.Fatalf("%d %s", s.status, s.raw)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	msgs := reqs[0].Messages()
	kinds, data := sources(t, msgs[len(msgs)-1].Blocks)
	if strings.Join(kinds, ",") != "image:base64:image/png,document:text:text/plain,text" || len(data) != 2 || data[0] != base64.StdEncoding.EncodeToString(png) {
		t.Errorf("the user message's blocks: %v", kinds)
	}
	for name, part := range map[string]string{
		"remote URL": file("image/png", "https://example.com/shot.png"),
		"zip":        file("application/zip", "data:application/zip;base64,UEsDBA=="),
		"not base64": file("image/png", "data:image/png,rawbytes"),
	} {
		if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-"+name, `{"type":"text","text":"look"}`, part)); s.status != 400 {
			t.Errorf("%s: %d %s", name, s.status, s.raw)
		}
	}
	if n := len(e.fake.Requests()); n != 1 {
		t.Errorf("a refused file reached the model: %d requests", n)
	}
}

// TestUIChatErrorBeforeStream: useChat's transport reads a response that
// is not 2xx as an error whose message is the body's text (the AI SDK's
// createUIApiCallError); it never parses that body as a stream. So an
// error before the stream is its message as plain text, with its status,
// not SSE frames the app would show as they are.
func TestUIChatErrorBeforeStream(t *testing.T) {
	e := MustChatEnv(t, nil)
	for name, tc := range map[string]struct {
		key, body string
		status    int
		message   string
	}{
		"NoKey":          {"", uiChatBody("c1", `{"type":"text","text":"hi"}`), 401, "missing API key"},
		"Regenerate":     {e.alice.key, `{"id":"c1","trigger":"regenerate-message","messages":[{"role":"user","parts":[]}]}`, 409, "nothing to regenerate"},
		"UnknownTrigger": {e.alice.key, `{"id":"c1","trigger":"edit-message","messages":[{"role":"user","parts":[]}]}`, 400, "must be submit-message or regenerate-message"},
	} {
		t.Run(name, func(t *testing.T) {
			s := e.chat(t.Context(), tc.key, "?protocol=ai-sdk", tc.body)
			body := string(s.errBody.body)
			if s.status != tc.status || !strings.Contains(body, tc.message) || strings.Contains(body, "data:") {
				t.Errorf("%d %q, want %d and the message alone", s.status, body, tc.status)
			}
			if ct := s.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

// TestUIChatToolOutputError: useChat's addToolOutput({state:
// 'output-error', errorText}) answers a paused tool the app could not
// show. It resumes the turn with an error tool_result carrying the text,
// instead of a 409 that leaves the chat stuck on the pause.
func TestUIChatToolOutputError(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Blocks(anthropictest.TextBlock("Pick one.", 2),
		anthropictest.ToolUse("toolu_o", "show_options", `{"options":["Airport","Downtown"]}`)))
	if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-e", `{"type":"text","text":"Where to?"}`)); s.status != 200 {
		t.Fatalf("%d %s", s.status, s.raw)
	}
	e.fake.Enqueue(anthropictest.Text("Then let us talk it through.", 4))
	body := `{"id":"chat-e","trigger":"submit-message","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"Where to?"}]},` +
		`{"id":"a1","role":"assistant","parts":[{"type":"tool-show_options","toolCallId":"toolu_o","state":"output-error",` +
		`"input":{"options":["Airport","Downtown"]},"errorText":"the picker failed to render"}]}]}`
	s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", body)
	if s.status != 200 || !strings.Contains(string(s.raw), `"delta":"Then"`) {
		t.Fatalf("answering with output-error: %d %s", s.status, s.raw)
	}
	reqs := e.fake.Requests()
	res := reqs[len(reqs)-1].ToolResults()
	if len(res) != 1 || !res[0].IsError || res[0].ResultText() != "the picker failed to render" {
		t.Fatalf("the model's tool_result: %+v", res)
	}
}

// TestUIChatBadFiles: useChat shows the body of a refused request as its
// error's message, the whole of what the user learns. A message with
// several files coachd cannot take says, for each, which file (its name,
// as the user picked it) and why, not only how many fields were wrong;
// the files it could take are not named, and the text stays bounded
// whatever the names' length.
func TestUIChatBadFiles(t *testing.T) {
	e := MustChatEnv(t, nil)
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngFile(t))
	file := func(name, mediaType, url string) string {
		return `{"type":"file","mediaType":` + jsonText(mediaType) + `,"filename":` + jsonText(name) + `,"url":` + jsonText(url) + `}`
	}
	long := strings.Repeat("x", 5000) + ".mp3"
	s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-bad", `{"type":"text","text":"look"}`,
		file("map.png", "image/png", png),
		file("notes.docx", "application/msword", "data:application/msword;base64,UEsDBA=="),
		file("shot.png", "image/png", "https://example.com/shot.png"),
		file(long, "audio/mpeg", "data:audio/mpeg;base64,SUQz")))
	body := string(s.errBody.body)
	if s.status != 400 {
		t.Fatalf("%d %s", s.status, body)
	}
	for _, want := range []string{`"notes.docx"`, "must be image/png", `"shot.png"`, "data: URL", `"xxxx`} {
		if !strings.Contains(body, want) {
			t.Errorf("the error %q does not say %q", body, want)
		}
	}
	if strings.Contains(body, "map.png") || len(body) > 2048 {
		t.Errorf("the error (%d bytes): %q", len(body), body)
	}
	// Files whose bytes are not what they say: found once decoded.
	s = e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-bad", `{"type":"text","text":"look"}`,
		file("map.png", "image/png", png),
		file("scan.png", "image/png", "data:image/png;base64,"+base64.StdEncoding.EncodeToString([]byte("%PDF-1.4 not a picture"))),
		file("plan.pdf", "application/pdf", "data:application/pdf;base64,"+base64.StdEncoding.EncodeToString([]byte("hello")))))
	body = string(s.errBody.body)
	if s.status != 400 || !strings.Contains(body, `messages.parts[2].mediaType: "scan.png"`) || !strings.Contains(body, `messages.parts[3]`) || !strings.Contains(body, `"plan.pdf"`) || strings.Contains(body, "map.png") {
		t.Errorf("files that are not what they say: %d %q", s.status, body)
	}
	if n := len(e.fake.Requests()); n != 0 {
		t.Errorf("%d model requests", n)
	}
}
