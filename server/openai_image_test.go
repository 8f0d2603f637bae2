package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// oaiImageBody is a chat completion whose messages are msgs then a user
// message of text and an image_url part with url.
func oaiImageBody(t *testing.T, text, url string, msgs ...map[string]any) string {
	t.Helper()
	parts := []map[string]any{{"type": "text", "text": text}, {"type": "image_url", "image_url": map[string]string{"url": url, "detail": "auto"}}}
	b, err := json.Marshal(map[string]any{"model": "default", "messages": append(msgs, map[string]any{"role": "user", "content": parts})})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func dataURL(mediaType string, data []byte) string {
	return "data:" + mediaType + ";base64," + base64.StdEncoding.EncodeToString(data)
}

// noisePNG is a PNG of about n bytes that does not compress.
func noisePNG(t testing.TB, n int) []byte {
	t.Helper()
	side := 1
	for side*side*4 < n {
		side++
	}
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(rng.UintN(256))
	}
	img.Set(0, 0, color.RGBA{1, 2, 3, 255})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestOpenAIImageParts: a user message's image_url parts with data: URLs
// (what Open WebUI and LibreChat send for a pasted photo) reach the model
// as image blocks before the text, within the attachments' types and
// limits (a 2 MiB photo too: more than other routes' body limit); a
// remote URL is a 400 naming the part (coachd fetches no URL), and so is
// an image that is not what it says or too large. The conversation, its
// image resent, goes on in the same session.
func TestOpenAIImageParts(t *testing.T) {
	photo := noisePNG(t, 2<<20)
	if len(photo) < 1<<20 || len(photo) > coachd.MaxAttachmentBytes {
		t.Fatalf("the photo is %d bytes", len(photo))
	}
	t.Run("OK", func(t *testing.T) {
		e := MustChatEnv(t, nil)
		budget := int64(10_000_000) // the fake counts an image's tokens by its size
		if _, err := e.db.UpdateUser(t.Context(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
			t.Fatal(err)
		}
		e.fake.Enqueue(anthropictest.Text("A plain square.", 4), anthropictest.Text("Nothing more.", 4))
		first := map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "What is this?"},
			{"type": "image_url", "image_url": map[string]string{"url": dataURL("image/png", photo)}}}}
		var c completion
		r := e.post(e.alice.key, "/v1/chat/completions", mustJSON(t, map[string]any{"model": "default", "messages": []any{first}}), nil, &c)
		if r.status != 200 || c.Choices[0].Message.Content != "A plain square." {
			t.Fatalf("%d %s", r.status, r.body)
		}
		msgs := e.fake.Requests()[0].Messages()
		kinds, data := sources(t, msgs[len(msgs)-1].Blocks)
		if strings.Join(kinds, ",") != "image:base64:image/png,text" || data[0] != base64.StdEncoding.EncodeToString(photo) {
			t.Errorf("the user message's blocks: %v", kinds)
		}
		r = e.post(e.alice.key, "/v1/chat/completions", mustJSON(t, map[string]any{"model": "default", "messages": []any{first,
			map[string]any{"role": "assistant", "content": "A plain square."}, map[string]any{"role": "user", "content": "Anything else?"}}}), nil, &c)
		if r.status != 200 || c.Choices[0].Message.Content != "Nothing more." {
			t.Fatalf("continued: %d %s", r.status, r.body)
		}
		if msgs := e.fake.Requests()[1].Messages(); len(msgs) != 3 {
			t.Errorf("the second turn did not continue the first's session: %d messages", len(msgs))
		}
	})
	for _, tc := range []struct {
		name, url, want string
	}{
		{"ErrRemote", "https://example.com/photo.png", "data:"},
		{"ErrPlainData", "data:image/png," + string(pngFile(t)[:8]), "base64"},
		{"ErrType", dataURL("image/svg+xml", []byte("<svg/>")), "image/png"},
		{"ErrNotImage", dataURL("application/pdf", pdfFile), "image/png"},
		{"ErrMismatch", dataURL("image/jpeg", pngFile(t)), "image/png"},
		{"ErrTooLarge", dataURL("image/png", noisePNG(t, 4<<20)), "MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := MustChatEnv(t, nil)
			r := e.post(e.alice.key, "/v1/chat/completions", oaiImageBody(t, "What is this?", tc.url), nil, nil)
			var body struct {
				Error struct {
					Type, Message string
					Param         *string
				}
			}
			json.Unmarshal(r.body, &body)
			if r.status != 400 || body.Error.Type != "invalid_request_error" || !strings.Contains(body.Error.Message, tc.want) ||
				body.Error.Param == nil || !strings.HasPrefix(*body.Error.Param, "messages[0].content[1]") {
				t.Errorf("%d %s", r.status, r.body)
			}
			if n := len(e.fake.Requests()); n != 0 {
				t.Errorf("the model was asked %d times", n)
			}
		})
	}
}

// TestOpenAIFileParts: a file part with file_data (a PDF, as the AI SDK's
// openai-compatible provider sends one) is a document attachment, named
// by its filename; one by file_id is a 400 (coachd keeps no OpenAI files).
func TestOpenAIFileParts(t *testing.T) {
	e := MustChatEnv(t, nil)
	e.fake.Enqueue(anthropictest.Text("Read it.", 4))
	file := func(f map[string]string) string {
		return mustJSON(t, map[string]any{"model": "default", "messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "My shift sheet."}, map[string]any{"type": "file", "file": f}}}}})
	}
	var c completion
	r := e.post(e.alice.key, "/v1/chat/completions", file(map[string]string{"filename": "shift.pdf", "file_data": dataURL("application/pdf", pdfFile)}), nil, &c)
	if r.status != 200 || c.Choices[0].Message.Content != "Read it." {
		t.Fatalf("%d %s", r.status, r.body)
	}
	msgs := e.fake.Requests()[0].Messages()
	blocks := msgs[len(msgs)-1].Blocks
	if kinds, _ := sources(t, blocks); strings.Join(kinds, ",") != "document:base64:application/pdf,text" || !strings.Contains(string(blocks[0].Extra["title"]), "shift.pdf") {
		t.Errorf("the user message's blocks: %v %s", kinds, blocks[0].Extra["title"])
	}
	r = e.post(e.alice.key, "/v1/chat/completions", file(map[string]string{"file_id": "file-abc"}), nil, nil)
	var body struct {
		Error struct{ Param *string }
	}
	json.Unmarshal(r.body, &body)
	if r.status != 400 || body.Error.Param == nil || *body.Error.Param != "messages[0].content[1].file.file_data" {
		t.Errorf("file_id: %d %s", r.status, r.body)
	}
}

// TestOpenAILongPhotoChat: Open WebUI and LibreChat resend every earlier
// photo with each message, so a photo chat passes ChatMaxBodyBytes after
// a handful of photos. Those are read past, not kept (coachd has them
// stored), and the body may be up to OAIMaxBodyBytes: the turn runs with
// the last message's photo. One message is still at most
// ChatMaxBodyBytes, and the body at most OAIMaxBodyBytes (413 each).
func TestOpenAILongPhotoChat(t *testing.T) {
	e := MustChatEnv(t, nil)
	budget := int64(10_000_000)
	if _, err := e.db.UpdateUser(t.Context(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(anthropictest.Text("Nice view.", 4))
	old := dataURL("image/png", noisePNG(t, 2<<20))
	var msgs []map[string]any
	for i := range 8 { // about 22 MiB of earlier photos
		msgs = append(msgs,
			map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "Day " + strconv.Itoa(i)},
				{"type": "image_url", "image_url": map[string]string{"url": old}}}},
			map[string]any{"role": "assistant", "content": "Noted."})
	}
	last := noisePNG(t, 64<<10)
	body := oaiImageBody(t, "And today?", dataURL("image/png", last), msgs...)
	if len(body) <= server.ChatMaxBodyBytes {
		t.Fatalf("the body is %d bytes", len(body))
	}
	var c completion
	if r := e.post(e.alice.key, "/v1/chat/completions", body, nil, &c); r.status != 200 || c.Choices[0].Message.Content != "Nice view." {
		t.Fatalf("%d %s", r.status, r.body)
	}
	sent := e.fake.Requests()[0].Messages()
	if kinds, data := sources(t, sent[len(sent)-1].Blocks); strings.Join(kinds, ",") != "image:base64:image/png,text" || data[0] != base64.StdEncoding.EncodeToString(last) {
		t.Errorf("the user message's blocks: %v", kinds)
	}

	status := func(body string) int {
		var out struct {
			Error struct{ Type string }
		}
		r := e.post(e.alice.key, "/v1/chat/completions", body, nil, nil)
		json.Unmarshal(r.body, &out)
		if r.status == 413 && out.Error.Type != "invalid_request_error" {
			t.Errorf("413 in another shape: %s", r.body)
		}
		return r.status
	}
	big := strings.Repeat("x", server.ChatMaxBodyBytes)
	if got := status(mustJSON(t, map[string]any{"model": "default", "messages": []any{map[string]any{"role": "user", "content": big}}})); got != 413 {
		t.Errorf("a message over ChatMaxBodyBytes: %d", got)
	}
	chunk := map[string]any{"role": "user", "content": big[:server.ChatMaxBodyBytes-1000]}
	var many []any
	for range server.OAIMaxBodyBytes/server.ChatMaxBodyBytes + 1 {
		many = append(many, chunk)
	}
	if got := status(mustJSON(t, map[string]any{"model": "default", "messages": many})); got != 413 {
		t.Errorf("a body over OAIMaxBodyBytes: %d", got)
	}
	if n := len(e.fake.Requests()); n != 1 {
		t.Errorf("the model was asked %d times", n)
	}
}
