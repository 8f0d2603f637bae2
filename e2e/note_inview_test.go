package e2e

import (
	"fmt"
	"strings"
	"testing"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestEndNoteInView: a long reply cut short (here at its length limit)
// ends with a note saying so. The page followed the reply to its last
// line, then drew the note below the fold without scrolling to it, so a
// reader who had not scrolled up saw the reply looking finished.
func TestEndNoteInView(t *testing.T) {
	e := newEnv(t, 1280, 800)
	var b strings.Builder
	for i := range 40 {
		fmt.Fprintf(&b, "Paragraph %d of a long reply.\n\n", i)
	}
	e.fake.Enqueue(at.Text(b.String(), 8).WithStop("max_tokens"))
	e.signIn()
	e.send("Tell me a lot")
	e.waitJS("the note", `document.querySelector(".msg.assistant .msg-note") !== null`)
	e.waitIdle()
	gap := `(() => { const s = document.getElementById("scroller"); return s.scrollHeight - s.scrollTop - s.clientHeight; })()`
	if got := eval[float64](e, gap); got > 1 {
		note := eval[string](e, `document.querySelector(".msg.assistant .msg-note").textContent`)
		t.Errorf("the page stops %vpx above its end, below it the note %q", got, note)
	}
}
