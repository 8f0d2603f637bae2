package server_test

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
)

// uiPhotoChat is useChat's body for a chat of n earlier days, each a user
// message of text and the photo old with the coach's reply, then a new
// question with the photo last: DefaultChatTransport resends every
// message of the chat, files too.
func uiPhotoChat(t testing.TB, id string, n int, old, last string) string {
	t.Helper()
	var msgs []any
	for i := range n {
		msgs = append(msgs,
			map[string]any{"id": "u" + strconv.Itoa(i), "role": "user", "parts": []map[string]any{
				{"type": "text", "text": "Day " + strconv.Itoa(i)},
				{"type": "file", "mediaType": "image/png", "filename": "day.png", "url": old}}},
			map[string]any{"id": "a" + strconv.Itoa(i), "role": "assistant", "parts": []map[string]any{
				{"type": "step-start"}, {"type": "text", "text": "Noted.", "state": "done"}}})
	}
	msgs = append(msgs, map[string]any{"id": "u-last", "role": "user", "parts": []map[string]any{
		{"type": "text", "text": "And today?"},
		{"type": "file", "mediaType": "image/png", "filename": "today.png", "url": last}}})
	return mustJSON(t, map[string]any{"id": id, "trigger": "submit-message", "messages": msgs})
}

// TestUIChatLongPhotoChat: useChat resends every earlier photo with each
// message, so a photo a day went past ChatMaxBodyBytes (413) after about
// five photos, though coachd reads only the newest message. The route
// now takes up to ForeignMaxBodyBytes, a message at a time: the turn
// runs and sends the model the last message's photo; a message over
// ChatMaxBodyBytes, or a body over ForeignMaxBodyBytes, is still a 413.
func TestUIChatLongPhotoChat(t *testing.T) {
	e := MustChatEnv(t, nil)
	budget := int64(10_000_000)
	if _, err := e.db.UpdateUser(t.Context(), e.alice.ID, coachd.UserUpdate{TokenBudget: &budget}); err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(anthropictest.Text("Nice view.", 4))
	last := noisePNG(t, 64<<10)
	body := uiPhotoChat(t, "chat-long", 8, dataURL("image/png", noisePNG(t, 2<<20)), dataURL("image/png", last)) // about 22 MiB
	if len(body) <= server.ChatMaxBodyBytes {
		t.Fatalf("the body is %d bytes", len(body))
	}
	s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", body)
	if s.status != 200 || !strings.Contains(string(s.raw), `"finishReason":"stop"`) {
		t.Fatalf("%d %s", s.status, s.raw)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	sent := reqs[0].Messages()
	if kinds, data := sources(t, sent[len(sent)-1].Blocks); strings.Join(kinds, ",") != "image:base64:image/png,text" || data[0] != base64.StdEncoding.EncodeToString(last) {
		t.Errorf("the user message's blocks: %v", kinds)
	}

	big := strings.Repeat("x", server.ChatMaxBodyBytes)
	if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", uiChatBody("chat-big", `{"type":"text","text":`+jsonText(big)+`}`)); s.status != 413 {
		t.Errorf("a message over ChatMaxBodyBytes: %d %.200s", s.status, s.raw)
	}
	chunk := `{"id":"x","role":"user","parts":[{"type":"text","text":"` + big[:server.ChatMaxBodyBytes-1000] + `"}]}`
	many := `{"id":"chat-many","trigger":"submit-message","messages":[` + strings.Repeat(chunk+",", server.ForeignMaxBodyBytes/server.ChatMaxBodyBytes) + chunk + `]}`
	if s := e.chat(t.Context(), e.alice.key, "?protocol=ai-sdk", many); s.status != 413 {
		t.Errorf("a body over ForeignMaxBodyBytes: %d %.200s", s.status, s.raw)
	}
	// The coachd dialect, which sends one message, keeps its bound.
	if s := e.chat(t.Context(), e.alice.key, "", mustJSON(t, map[string]string{"message": big})); s.status != 413 {
		t.Errorf("the coachd dialect over ChatMaxBodyBytes: %d %.200s", s.status, s.raw)
	}
	if n := len(e.fake.Requests()); n != 1 {
		t.Errorf("the model was asked %d times", n)
	}
}
