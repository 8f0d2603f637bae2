package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// heldCall is fakeCall's stand-in for the microphone and WebRTC stack,
// with the two slow steps of starting a call held until the test lets
// them go: the mint (window.__mintGo()) and the microphone permission
// (window.__grant()). It counts the peer connections still open and the
// microphone tracks still live; window.__settled says the held mint's
// answer was read and the page ran on as far as it goes without waiting.
const heldCall = `(() => {
	window.__pcs = [];
	window.__tracks = [];
	window.__mints = 0;
	window.__asked = 0;
	window.__settled = false;
	let grant = null;
	window.__grant = () => grant();
	navigator.mediaDevices.getUserMedia = () => {
		window.__asked++;
		return new Promise((resolve) => {
			grant = () => {
				const track = { live: true, stop() { this.live = false; } };
				window.__tracks.push(track);
				resolve({ getTracks: () => [track] });
			};
		});
	};
	window.RTCPeerConnection = class {
		constructor() { this.connectionState = "new"; window.__pcs.push(this); }
		addTrack() { if (this.connectionState === "closed") throw new DOMException("The RTCPeerConnection's signalingState is 'closed'.", "InvalidStateError"); }
		createDataChannel() { return {}; }
		async createOffer() { return { type: "offer", sdp: "v=0\r\n" }; }
		async setLocalDescription() {}
		async setRemoteDescription() { this.connectionState = "connected"; }
		close() { this.connectionState = "closed"; }
	};
	const f = window.fetch;
	let go = null;
	window.__mintGo = () => go();
	window.fetch = async (u, o) => {
		if (String(u).includes("/v1/realtime/calls")) return new Response("v=0\r\n", { status: 201 });
		if (String(u).includes("/v1/realtime/session")) {
			window.__mints++;
			if (window.__mints === 1) await new Promise((resolve) => { go = resolve; });
			const res = await f(u, o);
			const json = res.json.bind(res);
			res.json = async () => {
				const v = await json();
				setTimeout(() => { window.__settled = true; }, 0);
				return v;
			};
			return res;
		}
		return f(u, o);
	};
})()`

const openCalls = `window.__pcs.filter((p) => p.connectionState !== "closed").length`
const liveMics = `window.__tracks.filter((t) => t.live).length`

// TestVoiceStopWhileConnecting: a tap on the microphone while the call
// is still being set up (its secret being minted, or the browser asking
// for the microphone) ends it. The tap started a second call instead,
// and the first, no longer the button's, went on: its connection and the
// microphone stayed open after the user had stopped, with nothing left
// on the page to stop them; a tap while the browser asked for the
// microphone left the microphone on once allowed.
func TestVoiceStopWhileConnecting(t *testing.T) {
	e, _ := newVoiceEnv(t)
	e.run(chromedp.Evaluate[chromedp.Void](heldCall))
	state := `document.getElementById("mic").dataset.state`

	// While the secret is minted.
	e.run(chromedp.Click(chromedp.CSS("#mic")))
	e.waitJS("the mint", `window.__mints === 1 && `+state+` === "connecting"`)
	e.run(chromedp.Click(chromedp.CSS("#mic")))
	if got := eval[string](e, state); got != "idle" {
		t.Fatalf("after a second tap while connecting the microphone is %q (%d mints), want idle", got, eval[int](e, `window.__mints`))
	}
	e.run(chromedp.Evaluate[chromedp.Void](`window.__mintGo()`))
	e.waitJS("the mint's answer read", `window.__settled`)
	if n, asked := eval[int](e, openCalls), eval[int](e, `window.__asked`); n != 0 || asked != 0 {
		t.Fatalf("after the stop, %d calls are open and the microphone was asked for %d times", n, asked)
	}
	if got := eval[string](e, state); got != "idle" {
		t.Fatalf("the stopped call's mint left the microphone %q", got)
	}

	// While the browser asks for the microphone.
	e.run(chromedp.Click(chromedp.CSS("#mic")))
	e.waitJS("the microphone asked for", `window.__asked === 1`)
	e.run(chromedp.Click(chromedp.CSS("#mic")))
	e.waitJS("the stop", state+` === "idle"`)
	e.run(chromedp.Evaluate[chromedp.Void](`window.__grant()`))
	e.waitJS("the microphone given", `window.__tracks.length === 1`)
	e.waitJS("the microphone released", liveMics+` === 0`)
	if n := eval[int](e, openCalls); n != 0 || eval[string](e, state) != "idle" {
		t.Fatalf("after the stop %d calls are open, the microphone is %q", n, eval[string](e, state))
	}
}
