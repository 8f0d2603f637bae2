package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// fakeCall stands in for the browser's microphone and WebRTC stack (the
// test browser has neither, and the fake provider speaks no SDP): the
// call connects, and window.__dc is its event channel, on which the test
// plays the provider's transcript events. Every transcript post is
// recorded in window.__posts with its Idempotency-Key; the answer to the
// first is lost on its way back, after coachd stored the line.
const fakeCall = `(() => {
	navigator.mediaDevices.getUserMedia = async () => new MediaStream();
	window.RTCPeerConnection = class {
		constructor() { this.connectionState = "new"; }
		addTrack() {}
		createDataChannel() { window.__dc = {}; return window.__dc; }
		async createOffer() { return { type: "offer", sdp: "v=0\r\n" }; }
		async setLocalDescription() {}
		async setRemoteDescription() { this.connectionState = "connected"; }
		close() { this.connectionState = "closed"; }
	};
	window.__posts = [];
	const f = window.fetch;
	window.fetch = async (u, o) => {
		if (String(u).includes("/v1/realtime/calls")) return new Response("v=0\r\n", { status: 201, headers: { "Content-Type": "application/sdp" } });
		if (String(u).includes("/messages") && o && o.method === "POST") {
			window.__posts.push((o.headers && o.headers["Idempotency-Key"]) || "");
			const res = await f(u, o);
			if (window.__posts.length === 1) {
				await res.text();
				throw new TypeError("Failed to fetch");
			}
			return res;
		}
		return f(u, o);
	};
})()`

// TestVoiceTranscriptRetry: a transcript post whose answer is lost (the
// line was stored) is sent again with the same Idempotency-Key, and the
// line is stored once; the next line has a key of its own.
func TestVoiceTranscriptRetry(t *testing.T) {
	e, _ := newVoiceEnv(t)
	sid := e.startCall()

	hear := func(typ, text string) {
		ev, _ := json.Marshal(map[string]string{"type": typ, "transcript": text})
		evs, _ := json.Marshal(string(ev))
		e.run(chromedp.Evaluate[chromedp.Void](`window.__dc.onmessage({ data: ` + string(evs) + ` })`))
	}
	hear("conversation.item.input_audio_transcription.completed", "Where should I drive tonight?")
	toasts := `[...document.querySelectorAll(".toast")].map((t) => t.textContent).join(" | ")`
	e.waitJS("the line posted again, or given up", `window.__posts.length >= 2 || `+toasts+` !== ""`)
	if shown := eval[string](e, toasts); shown != "" {
		t.Fatalf("the user was shown %q; posts sent with the keys %q", shown, eval[[]string](e, `window.__posts`))
	}
	e.waitJS("the line shown", `document.getElementById("transcript").textContent.includes("Where should I drive tonight?")`)
	hear("response.output_audio_transcript.done", "The airport, after five.")
	e.waitJS("the reply shown", `document.getElementById("transcript").textContent.includes("The airport, after five.")`)

	posts := eval[[]string](e, `window.__posts`)
	if len(posts) != 3 || posts[0] == "" || posts[1] != posts[0] || posts[2] == "" || posts[2] == posts[0] {
		t.Errorf("Idempotency-Keys of the posts: %q, want the first line's key twice, then another", posts)
	}
	if shown := eval[string](e, toasts); shown != "" {
		t.Errorf("the user was shown %q", shown)
	}
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
