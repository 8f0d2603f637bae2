package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopShowsStoredReply: Stop ends the turn on the server, which
// stores what it had streamed. The page stopped reading the moment Stop
// was pressed, so the words streamed while the stop travelled were
// stored but never shown: the reply after a reload was longer than the
// one on screen. It now reads on to the stream's end (the server ends it
// at once) and shows exactly the stored reply.
func TestStopShowsStoredReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text(strings.Repeat("word ", 400), 4).Paced(0, 5*time.Millisecond))
	e.signIn()
	e.send("Go on and on")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.length > 200`)
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
	e.waitVisible(".msg.assistant .msg-note.stopped")
	shown := eval[string](e, `document.querySelector(".msg.assistant .md").textContent`)
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.querySelector(".msg.assistant .md")?.textContent.length > 0`)
	stored := eval[string](e, `document.querySelector(".msg.assistant .md").textContent`)
	if shown != stored || len(stored) >= 2000 {
		t.Errorf("after Stop the page showed %d characters, the stored reply has %d (of 2000): want the same, cut short", len(shown), len(stored))
	}
}
