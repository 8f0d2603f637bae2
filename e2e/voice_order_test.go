package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestVoiceSpokenOrder: the provider transcribes the driver's speech
// apart from the coach's reply, and the driver's line arrives after the
// reply to it. The session stores the question, then the answer: as
// they came, it read the answer first, in the page and in the next
// turn's history.
func TestVoiceSpokenOrder(t *testing.T) {
	e, _ := newVoiceEnv(t)
	sid := e.startCall()
	hear := func(ev map[string]any) {
		b, _ := json.Marshal(ev)
		s, _ := json.Marshal(string(b))
		e.run(chromedp.Evaluate[chromedp.Void](`window.__dc.onmessage({ data: ` + string(s) + ` })`))
	}
	hear(map[string]any{"type": "input_audio_buffer.committed", "item_id": "item_u1", "previous_item_id": nil})
	hear(map[string]any{"type": "conversation.item.added", "previous_item_id": "item_u1", "item": map[string]any{"id": "item_a1", "type": "message", "role": "assistant", "content": []any{}}})
	hear(map[string]any{"type": "response.output_audio_transcript.done", "item_id": "item_a1", "content_index": 0, "transcript": "The airport, after five."})
	hear(map[string]any{"type": "response.done", "response": map[string]any{"output": []any{map[string]any{"id": "item_a1"}}}})
	hear(map[string]any{"type": "conversation.item.input_audio_transcription.completed", "item_id": "item_u1", "content_index": 0, "transcript": "Where should I drive tonight?"})
	e.waitJS("both lines shown", `(() => { const t = document.getElementById("transcript").textContent; return t.includes("Where should I drive tonight?") && t.includes("The airport, after five."); })()`)

	res := e.apiDo("GET", "/v1/sessions/"+sid+"/messages", "", nil, http.StatusOK)
	defer res.Body.Close()
	var page struct {
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(res.Body).Decode(&page); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range page.Messages {
		got = append(got, m.Role+": "+m.Content)
	}
	want := []string{"user: Where should I drive tonight?", "assistant: The airport, after five."}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("stored %q, want %q", got, want)
	}
}
