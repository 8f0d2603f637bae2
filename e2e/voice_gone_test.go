package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestVoiceCallEndsWithSession: a call whose session stops taking its
// lines (deleted in another tab, or ended by the coach) ends, and the
// user is told once. It went on: every line the driver spoke was
// refused (404, 409) and lost, each with a toast of its own, the
// microphone live.
func TestVoiceCallEndsWithSession(t *testing.T) {
	e, _ := newVoiceEnv(t)
	sid := e.startCall()
	e.apiDo("DELETE", "/v1/sessions/"+sid, "", nil, http.StatusNoContent).Body.Close()

	e.run(chromedp.Evaluate[chromedp.Void](`window.__dc.onmessage({ data: JSON.stringify({ type: "conversation.item.input_audio_transcription.completed", transcript: "Where should I drive tonight?" }) })`))
	toasts := `[...document.querySelectorAll(".toast")].map((t) => t.textContent)`
	e.waitJS("the user told", toasts+`.length > 0`)
	if got := eval[string](e, `document.getElementById("mic").dataset.state`); got != "idle" {
		t.Fatalf("the call is %q after its session was deleted (toasts %q), want it ended", got, eval[[]string](e, toasts))
	}
	if got := eval[[]string](e, toasts); len(got) != 1 || !strings.Contains(got[0], "microphone") {
		t.Fatalf("toasts %q, want one saying the call ended and how to talk again", got)
	}
}
