package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestUpstreamBreaksDuringToolCall: the AI service broke its stream
// while the coach was writing a tool call's input (its card up). Live,
// the card said the call was stopped, beside the reply's text and the
// error; after a reload the card was gone: the server kept the text and
// dropped the call, unlike a turn stopped at the same point. The call is
// stored, answered "interrupted", and the reloaded page shows the card
// as the live one did; Retry then gets a whole reply.
func TestUpstreamBreaksDuringToolCall(t *testing.T) {
	e := newEnv(t, 1280, 800)
	input := `{"note_type":"preference","title":"Morning runs","content":"Prefers to run before work."}`
	e.fake.Enqueue(at.Blocks(at.TextBlock("Let me remember that.", 5), at.ToolUse("toolu_broken", "save_note", input, 10, 20, 30)).
		Paced(0, 10*time.Millisecond).ErrorAfter(12, "api_error", "Internal server error"))
	e.signIn()
	e.send("I like to run in the morning")
	e.waitVisible(".banner-retry")
	e.waitIdle()
	card := `[...document.querySelectorAll(".tool-card")].map((c) => c.dataset.tool + ":" + c.dataset.state + ":" + c.querySelector(".tool-status").textContent).join(",")`
	live := eval[string](e, card)
	if !strings.HasPrefix(live, "save_note:") {
		t.Fatalf("tool cards after the break = %q, want save_note's", live)
	}
	if got := eval[string](e, `document.getElementById("transcript").textContent`); !strings.Contains(got, "Let me remember that.") {
		t.Errorf("transcript after the break = %q, want the text before the call kept", got)
	}
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.getElementById("transcript").textContent.includes("Let me remember that.")`)
	e.waitIdle()
	if got := eval[string](e, card); got != live {
		t.Errorf("tool cards after a reload = %q, want %q as they were live", got, live)
	}

	// The next message is answered: the history sent is valid (the fake
	// refuses a tool_use without its result, as the API does).
	e.fake.Enqueue(at.Text("Noted, mornings it is.", 0))
	e.send("Did you get that?")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Noted, mornings it is.")`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q after the next message, want none", got)
	}
}
