package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestReloadMidReply: a page reloaded while the coach is still replying
// follows the turn again (GET /v1/sessions/{id} names it running): the
// reply finishes on screen, with its first round (stored already) drawn
// once, not once from the history and again from the replay, and Stop
// is offered meanwhile.
func TestReloadMidReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	input := `{"note_type":"preference","title":"Night shifts","content":"Drives Friday nights."}`
	second := "Saved. Start at the airport queue, then the stadium exit at ten, and the bars downtown until two."
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("Let me remember that.", 4), at.ToolUse("toolu_night", "save_note", input)),
		// Paced to leave the reload time to find the turn running, on a
		// loaded machine too (a reload and its page's first requests
		// took over half a second with other tests beside it).
		at.Text(second, 8).Paced(0, 250*time.Millisecond),
	)
	e.signIn()
	e.send("I drive on Friday nights")
	e.waitJS("the second round's first text", `document.querySelector(".msg.assistant")?.textContent.includes("Saved.")`)
	e.run(chromedp.Reload())
	e.waitJS("the turn followed again", `document.body.dataset.phase !== "idle"`)
	if !eval[bool](e, `!document.getElementById("stop").hidden`) {
		t.Error("Stop is not offered while the reloaded page follows the turn")
	}
	e.waitJS("the whole reply", `document.querySelector(".msg.assistant")?.textContent.includes("until two.")`)
	e.waitIdle()
	check := func(when string) {
		t.Helper()
		if n := eval[int](e, `document.querySelectorAll(".msg.user").length`); n != 1 {
			t.Errorf("%s: %d user messages, want 1", when, n)
		}
		if n := eval[int](e, `document.querySelectorAll(".tool-card[data-tool=save_note]").length`); n != 1 {
			t.Errorf("%s: %d save_note cards, want 1", when, n)
		}
		text := eval[string](e, `[...document.querySelectorAll(".msg.assistant")].map(m => m.textContent).join("|")`)
		if strings.Count(text, "Let me remember that.") != 1 || strings.Count(text, "until two.") != 1 {
			t.Errorf("%s: the reply drawn as %q, want each round once", when, text)
		}
	}
	check("after the reload")
	if eval[bool](e, `!!document.querySelector(".banner:not([hidden])")?.textContent.trim()`) {
		t.Errorf("an error banner: %s", eval[string](e, `document.querySelector(".banner").textContent`))
	}
	// The session stream is closed with the turn's end.
	e.faults.waitStreamsClosed(t)
	// Once the turn has ended, a reload draws the stored history alone.
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.querySelector(".msg.assistant")?.textContent.includes("until two.")`)
	check("after the turn")
	if got := eval[string](e, `document.body.dataset.phase`); got != "idle" {
		t.Errorf("phase %q after reloading an ended turn", got)
	}
}

// TestOlderSessions: the sidebar lists the 50 newest conversations and
// offers the older ones, 50 more a click; without it a user's 51st
// conversation could never be opened from the sidebar again.
func TestOlderSessions(t *testing.T) {
	e := newEnv(t, 1280, 800)
	for i := range 57 {
		e.create("/v1/sessions", fmt.Sprintf(`{"title":"Plan %02d"}`, i))
	}
	e.signIn()
	e.waitJS("the first 50", `document.querySelectorAll("#session-list li").length === 50`)
	if eval[bool](e, `document.getElementById("session-more").hidden`) {
		t.Fatal("no way to list the older conversations")
	}
	if eval[bool](e, `[...document.querySelectorAll(".session-title")].some(s => s.textContent === "Plan 00")`) {
		t.Error("the oldest conversation is listed among the first 50")
	}
	e.run(chromedp.Click(chromedp.CSS("#session-more")))
	e.waitJS("all 57", `document.querySelectorAll("#session-list li").length === 57`)
	if !eval[bool](e, `document.getElementById("session-more").hidden`) {
		t.Error("Show older conversations still offered with none left")
	}
	// The oldest opens.
	eval[chromedp.Void](e, `[...document.querySelectorAll(".session-title")].find(s => s.textContent === "Plan 00").click()`)
	e.waitJS("the oldest open", `document.getElementById("chat-title").textContent === "Plan 00"`)
}
