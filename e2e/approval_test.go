package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// approvalEnv serves testdata/approvalpack, whose coach needs the user's
// approval to save a note of importance 5 or more, and pauses a turn on
// such a call.
func approvalEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t, 1280, 800, "--pack", filepath.Join(repoRoot(t), "e2e", "testdata", "approvalpack"))
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("I'd like to remember that.", 0),
			at.ToolUse("toolu_ap1", "save_note", `{"note_type":"preference","title":"Morning runs","content":"Runs before work","importance":8}`)),
	)
	e.signIn()
	e.send("Remember that I run in the mornings")
	e.waitVisible(".interaction.approval .approve")
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".interaction.approval .interaction-prompt").textContent`); got != "save_note needs your approval when importance ≥ 5" {
		t.Errorf("prompt = %q", got)
	}
	if got := eval[string](e, `document.querySelector(".interaction.approval .approval-input").textContent`); !strings.Contains(got, `"title": "Morning runs"`) {
		t.Errorf("shown input = %q", got)
	}
	if got := eval[string](e, `document.querySelector(".tool-card[data-tool=save_note]").dataset.state`); got != "waiting" {
		t.Errorf("card state = %q", got)
	}
	return e
}

// notes lists the demo user's notes through the API.
func (e *env) notes() []string {
	e.t.Helper()
	req, _ := http.NewRequest("GET", e.url+"/v1/notes", nil)
	req.Header.Set("Authorization", "Bearer "+e.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		Notes []struct {
			Title string `json:"title"`
		} `json:"notes"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, n := range body.Notes {
		out = append(out, n.Title)
	}
	return out
}

func TestApprovalApprove(t *testing.T) {
	e := approvalEnv(t)
	if n := len(e.notes()); n != 0 {
		t.Fatalf("%d notes saved before approval", n)
	}
	// The approval survives a reload: the session's pending record draws it.
	e.run(chromedp.Reload())
	e.waitVisible(".interaction.approval .approve")
	e.fake.Enqueue(at.Text("Saved: morning runs.", 4))
	// Two clicks in the same task: the second must do nothing.
	eval[chromedp.Void](e, `(() => {
		const b = document.querySelector(".interaction.approval .approve");
		b.click(); b.click(); document.querySelector(".interaction.approval .deny").click();
	})()`)
	e.waitJS("the resumed reply", `document.querySelector("#transcript")?.textContent.includes("Saved: morning runs.")`)
	e.waitIdle()
	if n := e.faults.count("POST", "/v1/chat/stream"); n != 2 {
		t.Errorf("%d chat requests, want 2", n)
	}
	e.waitJS("the card done", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "done"`)
	if got := e.notes(); len(got) != 1 || got[0] != "Morning runs" {
		t.Errorf("notes %v", got)
	}
	reqs := e.fake.Requests()
	if trs := reqs[len(reqs)-1].ToolResults(); len(trs) != 1 || trs[0].IsError {
		t.Errorf("tool results sent to the model = %+v", trs)
	}
	if !eval[bool](e, `[...document.querySelectorAll(".interaction.approval button")].every(b => b.disabled)`) {
		t.Error("the approval buttons are still enabled")
	}
}

func TestApprovalDeny(t *testing.T) {
	e := approvalEnv(t)
	e.fake.Enqueue(at.Text("Understood, I won't save it.", 4))
	e.run(chromedp.SendKeys(chromedp.CSS(".interaction.approval .approval-reason"), "not now"))
	eval[chromedp.Void](e, `document.querySelector(".interaction.approval .deny").click()`)
	e.waitJS("the resumed reply", `document.querySelector("#transcript")?.textContent.includes("I won't save it")`)
	e.waitIdle()
	e.waitJS("the card denied", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "denied"`)
	if got := eval[string](e, `document.querySelector(".msg.user.answer .bubble").textContent`); got != "Denied: not now" {
		t.Errorf("answer bubble = %q", got)
	}
	if got := e.notes(); len(got) != 0 {
		t.Errorf("a denied note was saved: %v", got)
	}
	reqs := e.fake.Requests()
	if trs := reqs[len(reqs)-1].ToolResults(); len(trs) != 1 || !trs[0].IsError || trs[0].ResultText() != "The user denied this call: not now" {
		t.Errorf("tool results sent to the model = %+v", trs)
	}
	// History shows the denial after a reload, with no controls left.
	e.run(chromedp.Reload())
	e.waitJS("the stored denial", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "denied"`)
	if n := eval[int](e, `document.querySelectorAll(".interaction.approval").length`); n != 0 {
		t.Errorf("%d approval boxes after the answer", n)
	}
}
