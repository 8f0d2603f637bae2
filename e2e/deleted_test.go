package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// deleteSession deletes a session through the API, as another tab or
// app of the user's would, and wants 204.
func (e *env) deleteSession(id string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodDelete, e.url+"/v1/sessions/"+id, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		e.t.Fatalf("DELETE session %s: %s", id, res.Status)
	}
}

// TestSendToDeletedConversation: a conversation deleted elsewhere (another
// tab, the API) refused every new message with a "Not found" banner until
// the user thought to start a new conversation. The page now says it was
// deleted and opens a new conversation, the message kept in the composer;
// sending it starts that conversation.
func TestSendToDeletedConversation(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("First reply.", 0), at.Text("A fresh start.", 0))
	e.signIn()
	e.send("Hello")
	e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("First reply.")`)
	e.waitIdle()
	old := strings.TrimPrefix(eval[string](e, `location.hash`), "#/")
	if !strings.HasPrefix(old, "sess_") {
		t.Fatalf("hash %q, want the conversation's", old)
	}
	e.deleteSession(old)

	e.send("Are you there?")
	e.waitJS("the deletion noticed", `document.getElementById("banner-host").textContent.includes("deleted")`)
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".banner-title")?.textContent || ""`); got == "Not found" {
		t.Errorf("banner title %q, want it to say the conversation was deleted", got)
	}
	if got := eval[string](e, `document.getElementById("input").value`); got != "Are you there?" {
		t.Errorf("composer %q, want the message kept", got)
	}
	if got := eval[string](e, `location.hash`); got != "" {
		t.Errorf("hash %q, want a new conversation", got)
	}
	if eval[bool](e, `document.getElementById("transcript").textContent.includes("First reply.")`) {
		t.Error("the deleted conversation is still drawn")
	}

	e.run(pressEnter())
	e.waitJS("the new conversation's reply", `document.getElementById("transcript").textContent.includes("A fresh start.")`)
	e.waitIdle()
	if id := strings.TrimPrefix(eval[string](e, `location.hash`), "#/"); id == old || !strings.HasPrefix(id, "sess_") {
		t.Errorf("conversation %q after sending, want a new one (the deleted was %s)", id, old)
	}
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q after the new conversation started, want none", got)
	}
}

// TestAnswerInDeletedConversation: answering a question in a conversation
// deleted elsewhere showed the server's "Not found" beside the question,
// its pills given back to be pressed for the same refusal. The page now
// says the conversation was deleted and opens a new one, keeping what the
// composer holds and the focus in it.
func TestAnswerInDeletedConversation(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.askTime()
	old := strings.TrimPrefix(eval[string](e, `location.hash`), "#/")
	e.deleteSession(old)
	e.run(chromedp.SendKeys(chromedp.CSS("#input"), "draft"))

	e.run(chromedp.Click(chromedp.CSS(`.interaction .pill[data-value="Evening"]`)))
	e.waitJS("the deletion noticed", `document.getElementById("banner-host").textContent.includes("deleted")`)
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".banner-title")?.textContent || ""`); got == "Not found" {
		t.Errorf("banner title %q, want it to say the conversation was deleted", got)
	}
	if got := eval[string](e, `location.hash`); got != "" {
		t.Errorf("hash %q, want a new conversation", got)
	}
	if eval[bool](e, `document.querySelector(".interaction") !== null`) {
		t.Error("the deleted conversation's question is still drawn")
	}
	if got := eval[string](e, `document.getElementById("input").value`); got != "draft" {
		t.Errorf("composer %q, want what was typed kept", got)
	}
	if got := eval[string](e, `document.activeElement?.id || ""`); got != "input" {
		t.Errorf("focus on %q, want the composer", got)
	}
}
