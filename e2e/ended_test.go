package e2e

import (
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSendAfterSessionEnded: once the coach completes the conversation
// (complete_session), the server takes no more messages in it ("session
// is completed; start a new session"). The page kept offering its
// composer, and every message typed there was refused with that banner,
// the user left to find New conversation themselves. A message typed in
// an ended conversation now starts a new one, live or after a reload.
func TestSendAfterSessionEnded(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("Goodbye!", 0), at.ToolUse("toolu_done", "complete_session", `{"type":"session","summary":"said goodbye"}`)),
		at.Text("Bye for now.", 0),
		at.Text("A new start.", 0),
		at.Text("Another new start.", 0),
	)
	e.signIn()
	e.send("That's all, bye")
	e.waitJS("the goodbye", `document.getElementById("transcript").textContent.includes("Bye for now.")`)
	e.waitIdle()
	ended := eval[string](e, `location.hash`)
	check := func(e *env, reply string, sessions int) {
		e.t.Helper()
		e.waitJS("the reply in a new conversation", `document.getElementById("transcript").textContent.includes(`+jsString(reply)+`) || document.getElementById("banner-host").textContent !== ""`)
		e.waitIdle()
		if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
			e.t.Fatalf("banner %q, want the message sent in a new conversation", got)
		}
		if got := eval[string](e, `location.hash`); got == ended || got == "" {
			e.t.Errorf("conversation in the URL = %q, want a new one (the ended one is %s)", got, ended)
		}
		if got := eval[string](e, `document.getElementById("transcript").textContent`); got != "One more thing"+reply && got != "Later"+reply {
			e.t.Errorf("transcript = %q, want only the new conversation", got)
		}
		e.waitJS("the new conversation in the list", `document.querySelectorAll("#session-list li").length === `+strconv.Itoa(sessions))
	}
	t.Run("Live", func(t *testing.T) {
		e := e.sub(t)
		e.send("One more thing")
		check(e, "A new start.", 2)
	})
	t.Run("Reopened", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Navigate(e.url + "/" + ended))
		e.waitJS("the ended conversation", `document.getElementById("transcript").textContent.includes("Bye for now.")`)
		e.send("Later")
		check(e, "Another new start.", 3)
	})
}
