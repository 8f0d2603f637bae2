package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSignOutEveryTab: signing out in one tab signs out the others open
// on the app. The key is forgotten by the browser; a second tab kept it in
// memory and went on showing (and sending as) the user who signed out,
// for the next person at a shared computer to find. Signing in again
// signs them in again.
func TestSignOutEveryTab(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Hello there.", 0))
	e.signIn()
	e.send("My private question")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Hello there.")`)
	e.waitIdle()
	b, cancel := e.secondTab("Hello there.")
	defer cancel()

	e.run(chromedp.Click(chromedp.CSS("#signout")))
	e.waitVisible("#signin-key")
	b.waitJS("the second tab signed out", `document.body.dataset.view === "signin"`)
	got := eval[map[string]any](b, `({
		transcript: document.getElementById("transcript").textContent,
		sessions: document.querySelectorAll("#session-list li").length,
		hash: location.hash,
	})`)
	if got["transcript"] != "" || got["sessions"] != 0.0 || got["hash"] != "" {
		t.Errorf("the second tab after sign-out: %v, want nothing of the user's", got)
	}
	// Signing in again in the first tab signs the second in too.
	e.signIn()
	b.waitJS("the second tab signed in", `document.body.dataset.view === "app" && document.getElementById("me-name").textContent === "demo"`)
}
