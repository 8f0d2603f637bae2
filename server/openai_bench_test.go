package server_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// BenchmarkOpenAIImageConversation is one POST /v1/chat/completions of
// a long conversation with photos, as Open WebUI resends it each turn:
// 12 user messages of text and a 512 KiB photo (data: URL) with the
// coach's replies between them, then a new question with a small photo;
// about 9 MiB of JSON. Run with -benchmem: it is mostly the cost of
// reading the messages.
func BenchmarkOpenAIImageConversation(b *testing.B) {
	e := mustBenchEnv(b)
	reply := anthropictest.Text("A short coaching reply of a few words.", 8)
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	e.fake.SetRecording(false)
	photo := dataURL("image/png", noisePNG(b, 512<<10))
	var msgs []any
	for i := range 12 {
		msgs = append(msgs,
			map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "What about this one, number " + strconv.Itoa(i) + "?"},
				{"type": "image_url", "image_url": map[string]string{"url": photo}}}},
			map[string]any{"role": "assistant", "content": "It looks fine; keep the pace you had on day " + strconv.Itoa(i) + "."})
	}
	msgs = append(msgs, map[string]any{"role": "user", "content": []map[string]any{{"type": "text", "text": "And now?"},
		{"type": "image_url", "image_url": map[string]string{"url": dataURL("image/png", noisePNG(b, 16<<10))}}}})
	body := mustJSON(b, map[string]any{"model": "default", "messages": msgs})
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if r := e.post(e.alice.key, "/v1/chat/completions", body, nil, nil); r.status != 200 {
			b.Fatalf("%d %s", r.status, r.body)
		}
	}
}

// BenchmarkUIChatImageConversation is BenchmarkOpenAIImageConversation
// through useChat's door: 12 earlier days of text and a 512 KiB photo
// (file parts with data: URLs) with the coach's replies, then a new
// question with a small photo, about 9 MiB of JSON, as DefaultChatTransport
// resends it each turn. Each request is a new chat (its own session).
func BenchmarkUIChatImageConversation(b *testing.B) {
	e := mustBenchEnv(b)
	reply := anthropictest.Text("A short coaching reply of a few words.", 8)
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return reply })
	e.fake.SetRecording(false)
	photo, last := dataURL("image/png", noisePNG(b, 512<<10)), dataURL("image/png", noisePNG(b, 16<<10))
	body := uiPhotoChat(b, "chat", 12, photo, last)
	b.SetBytes(int64(len(body)))
	n := 0
	for b.Loop() {
		n++
		req := strings.Replace(body, `"id":"chat"`, `"id":"chat-`+strconv.Itoa(n)+`"`, 1)
		if s := e.chat(b.Context(), e.alice.key, "?protocol=ai-sdk", req); s.status != 200 {
			b.Fatalf("%d %s", s.status, s.raw)
		}
	}
}
