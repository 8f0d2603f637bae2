package e2e

import (
	"testing"
	"time"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestTranscriptBusyWhileStreaming: the transcript's live part (#live,
// what is said after opening) is a polite live region, and a reply being
// written is drawn again every frame (its Markdown re-rendered), so a
// screen reader announced the reply over and over as it grew. The live
// region is aria-busy while a reply is written, which holds the
// announcements until it is done.
func TestTranscriptBusyWhileStreaming(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Start at the airport, then the stadium at ten, then downtown until two.", 4).Paced(0, 30*time.Millisecond))
	e.signIn()
	if got := eval[string](e, `document.getElementById("live").getAttribute("aria-live")`); got != "polite" {
		t.Fatalf("transcript aria-live = %q, want polite", got)
	}
	e.send("Plan my night")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
	if got := eval[string](e, `document.getElementById("live").getAttribute("aria-busy") ?? ""`); got != "true" {
		t.Errorf("transcript aria-busy while the reply is written = %q, want true", got)
	}
	e.waitJS("the whole reply", `document.getElementById("transcript").textContent.includes("until two.")`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("live").getAttribute("aria-busy") ?? ""`); got == "true" {
		t.Errorf("transcript aria-busy after the reply = %q, want it cleared", got)
	}
}
