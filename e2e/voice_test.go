package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/voice/voicetest"
)

// TestVoiceButton: the microphone shows only when the server has a voice
// provider; clicking it mints a secret for the open session.
func TestVoiceButton(t *testing.T) {
	t.Run("HiddenWithoutVoice", func(t *testing.T) {
		e := newEnv(t, 1280, 800)
		e.signIn()
		e.waitJS("voice checked", `document.body.dataset.voice === "off"`)
		if !eval[bool](e, `document.getElementById("mic").hidden`) {
			t.Fatal("the microphone shows on a server without voice")
		}
	})
	t.Run("ShownWithVoice", func(t *testing.T) {
		e, provider := newVoiceEnv(t)
		// Start a conversation so there is a session to talk in.
		e.fake.Enqueue(anthropictest.Text("Hello from the coach.", 5))
		e.send("hi")
		e.waitJS("the reply", `location.hash.startsWith("#/sess_") && document.getElementById("transcript").textContent.includes("Hello from the coach.")`)
		e.waitIdle()
		sid := eval[string](e, `location.hash.slice(2)`)
		if !strings.HasPrefix(sid, "sess_") {
			t.Fatalf("no session in the URL: %q", sid)
		}
		// The test browser has no microphone: it refuses at once, after
		// the secret was minted. The mint request is recorded on its way.
		e.run(chromedp.Evaluate[chromedp.Void](`(() => {
			window.__mints = [];
			const f = window.fetch;
			window.fetch = (u, o) => {
				if (String(u).includes("/v1/realtime/session")) window.__mints.push(o && o.body);
				return f(u, o);
			};
			navigator.mediaDevices.getUserMedia = () => Promise.reject(new Error("no microphone in this test"));
		})()`))
		e.run(chromedp.Click(chromedp.CSS("#mic")))
		e.waitJS("the refusal", `[...document.querySelectorAll(".toast")].some((t) => t.textContent.includes("no microphone"))`)
		e.waitJS("the call ended", `document.getElementById("mic").dataset.state === "idle"`)
		mints := eval[[]string](e, `window.__mints`)
		if len(mints) != 1 || !strings.Contains(mints[0], `"session_id":"`+sid+`"`) {
			t.Fatalf("mint requests %q, want one for %s", mints, sid)
		}
		if n := provider.Secrets(); n != 1 {
			t.Fatalf("the provider minted %d secrets", n)
		}
		reqs := provider.Requests()
		if reqs[0].Authorization != "Bearer "+voiceKey {
			t.Fatalf("the provider got %q", reqs[0].Authorization)
		}
		// The browser saw the secret, never the key.
		if strings.Contains(eval[string](e, `document.documentElement.outerHTML + JSON.stringify(localStorage)`), voiceKey) {
			t.Fatal("the provider key reached the page")
		}
	})
}

// voiceKey is the fake provider's key (newVoiceEnv).
const voiceKey = "sk-e2e-voice-key-0123456789"

// newVoiceEnv starts coachd with voice on, against a fake provider,
// and signs in: the microphone shows.
func newVoiceEnv(t *testing.T) (*env, *voicetest.Server) {
	t.Helper()
	provider := voicetest.New(t, voiceKey)
	keyFile := filepath.Join(t.TempDir(), "openai.key")
	if err := os.WriteFile(keyFile, []byte(voiceKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, 1280, 800, "--voice-provider-url", provider.URL, "--voice-key-file", keyFile)
	e.signIn()
	e.waitJS("voice checked", `document.body.dataset.voice === "on"`)
	e.waitVisible("#mic")
	return e, provider
}

// startCall starts a call through fakeCall's stand-ins for the
// microphone and WebRTC and returns its session's id.
func (e *env) startCall() string {
	e.t.Helper()
	e.run(chromedp.Evaluate[chromedp.Void](fakeCall))
	e.run(chromedp.Click(chromedp.CSS("#mic")))
	e.waitJS("the call", `document.getElementById("mic").dataset.state === "live" && location.hash.startsWith("#/sess_")`)
	return eval[string](e, `location.hash.slice(2)`)
}
