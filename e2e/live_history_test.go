package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestHistoryNotAnnounced: the whole transcript was one polite live
// region, so opening a conversation (or reloading it) put every stored
// message into it at once, and a screen reader read the conversation
// aloud from the top, up to a hundred messages. The stored messages are
// now drawn outside the live region; what is said after opening (the
// user's message, the reply) is still inside it.
func TestHistoryNotAnnounced(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Hello there.", 0), at.Text("Back again.", 0))
	e.signIn()
	e.send("Hi")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Hello there.")`)
	e.waitIdle()
	e.run(chromedp.Reload())
	e.waitJS("the history", `document.getElementById("transcript").textContent.includes("Hello there.")`)
	e.waitIdle()
	if got := eval[int](e, `[...document.querySelectorAll(".msg")].filter((m) => m.closest('[aria-live]')).length`); got != 0 {
		t.Errorf("%d stored messages drawn inside a live region, want none", got)
	}
	e.send("Again")
	e.waitJS("the new reply", `document.getElementById("transcript").textContent.includes("Back again.")`)
	e.waitIdle()
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg")].map((m) => m.closest('[aria-live="polite"]') ? "live" : "quiet")`); len(got) != 4 || got[0] != "quiet" || got[1] != "quiet" || got[2] != "live" || got[3] != "live" {
		t.Errorf("messages in the live region: %v, want the two new ones only", got)
	}
}
