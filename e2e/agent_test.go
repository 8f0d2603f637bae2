package e2e

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestPickAgent: with a pack of several coaches, a new conversation can
// be started with any of those a user may start (not the internal ones);
// the page offered no choice, so every conversation went to the default
// coach.
func TestPickAgent(t *testing.T) {
	e := newEnv(t, 1280, 800, "--pack", filepath.Join(repoRoot(t), "e2e", "testdata", "twoagentpack"))
	e.fake.Enqueue(at.Text("Let's talk about your sleep.", 0), at.Text("Still about sleep.", 0))
	e.signIn()
	e.waitJS("the coaches to choose from", `document.querySelectorAll("#agent option").length > 0 && !document.getElementById("agent-pick").hidden`)
	if got := eval[[]string](e, `[...document.querySelectorAll("#agent option")].map((o) => o.value)`); strings.Join(got, ",") != "runcoach,sleepcoach" {
		t.Errorf("coaches offered = %v, want runcoach and sleepcoach (the internal one left out)", got)
	}
	if got := eval[string](e, `document.getElementById("agent").value`); got != "runcoach" {
		t.Errorf("coach chosen at first = %q, want the default, runcoach", got)
	}
	e.run(chromedp.SetValue(chromedp.CSS("#agent"), "sleepcoach"))
	e.send("I sleep badly")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("your sleep.")`)
	e.waitIdle()
	reqs := e.fake.Requests()
	if !bytes.Contains(reqs[len(reqs)-1].Raw, []byte("You are a sleep coach.")) {
		t.Errorf("the model was not given the sleep coach's prompt")
	}
	// The conversation goes on with its coach, and the choice is no
	// longer offered in it.
	if eval[bool](e, `!document.getElementById("agent-pick").closest("[hidden]")`) {
		t.Error("the coach is still offered inside a conversation")
	}
	e.send("And now?")
	e.waitJS("the second reply", `document.getElementById("transcript").textContent.includes("Still about sleep.")`)
	e.waitIdle()
	reqs = e.fake.Requests()
	if !bytes.Contains(reqs[len(reqs)-1].Raw, []byte("You are a sleep coach.")) {
		t.Errorf("the second turn was not the sleep coach's")
	}
}

// TestSessionListNamesCoach: with several coaches, each conversation in
// the sidebar says whose it is; they were listed alike, so a user could
// not tell the sleep coach's conversations from the running coach's.
func TestSessionListNamesCoach(t *testing.T) {
	e := newEnv(t, 1280, 800, "--pack", filepath.Join(repoRoot(t), "e2e", "testdata", "twoagentpack"))
	e.fake.Enqueue(at.Text("Run easy.", 0), at.Text("Sleep early.", 0))
	e.signIn()
	e.waitJS("the coaches to choose from", `!document.getElementById("agent-pick").hidden`)
	e.send("Running?")
	e.waitJS("the first reply", `document.getElementById("transcript").textContent.includes("Run easy.")`)
	e.waitIdle()
	e.run(chromedp.Click(chromedp.CSS("#new-chat")))
	e.waitVisible("#agent-pick")
	e.run(chromedp.SetValue(chromedp.CSS("#agent"), "sleepcoach"))
	e.send("Sleep?")
	e.waitJS("the second reply", `document.getElementById("transcript").textContent.includes("Sleep early.")`)
	e.waitIdle()
	e.waitJS("both in the list", `document.querySelectorAll("#session-list .session").length === 2`)
	got := eval[[]string](e, `[...document.querySelectorAll("#session-list .session")].map((s) => s.querySelector(".session-agent")?.textContent ?? "")`)
	if strings.Join(got, ",") != "sleepcoach,runcoach" {
		t.Errorf("coaches named in the list = %v, want [sleepcoach runcoach] (newest first)", got)
	}
}
