package e2e

import (
	"strings"
	"testing"
	"time"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestDeletedWhileReplying: a conversation deleted elsewhere (another
// tab, the API) while its reply was being written left the page on it,
// under a "Not found" banner quoting the server (`session "sess_…": not
// found`), as if the next message could still go there; so did a second
// tab following the reply. Each now says the conversation was deleted
// and opens a new one, as the page does when a message is sent to a
// deleted conversation.
func TestDeletedWhileReplying(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Hello.", 0), at.Text(nightPlan, 4).Paced(0, 60*time.Millisecond))
	e.signIn()
	e.send("Hi")
	e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("Hello.")`)
	e.waitIdle()
	b, cancel := e.secondTab("Hello.")
	defer cancel()
	e.send("Plan my night")
	b.waitJS("the reply followed in the second tab", `document.getElementById("transcript").textContent.includes("airport")`)
	old := strings.TrimPrefix(eval[string](e, `location.hash`), "#/")
	e.deleteSession(old)
	for name, tab := range map[string]*env{"sending tab": e, "following tab": b} {
		tab.waitJS("the deletion noticed in the "+name, `document.getElementById("banner-host").textContent.includes("deleted")`)
		tab.waitIdle()
		if got := eval[string](tab, `document.querySelector(".banner-title")?.textContent || ""`); got == "Not found" {
			t.Errorf("%s: banner title %q, want it to say the conversation was deleted", name, got)
		}
		if got := eval[string](tab, `document.getElementById("banner-host").textContent`); strings.Contains(got, "sess_") {
			t.Errorf("%s: banner %q quotes the server's message", name, got)
		}
		if got := eval[string](tab, `location.hash`); got != "" {
			t.Errorf("%s: hash %q, want a new conversation", name, got)
		}
		if eval[bool](tab, `document.getElementById("transcript").textContent.includes("Plan my night")`) {
			t.Errorf("%s: the deleted conversation is still drawn", name)
		}
	}
}
