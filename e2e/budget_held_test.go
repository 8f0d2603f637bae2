package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestBudgetHeldNotUsed: the header counted tokens that other turns held
// (here an app's own loop: a preflight not yet recorded) as used while
// the page's turn ran, from its usage events' budget_remaining; they
// vanished when the turn ended, never spent. The header shows used and
// held apart, as GET /v1/me gives them, during the turn and after it.
func TestBudgetHeldNotUsed(t *testing.T) {
	e := newEnv(t, 1280, 800, "--default-budget", "100000")
	res := e.apiDo("POST", "/v1/chat/preflight", `{"message":"I drive mornings"}`, nil, http.StatusOK)
	var pre struct {
		Estimate int64 `json:"estimated_tokens"`
	}
	err := json.NewDecoder(res.Body).Decode(&pre)
	res.Body.Close()
	if err != nil || pre.Estimate <= 0 {
		t.Fatalf("preflight: estimate %d, %v", pre.Estimate, err)
	}
	e.fake.Enqueue(at.Blocks(at.ToolUse("toolu_note", "save_note", `{"note_type":"preference","title":"Mornings","content":"drives mornings"}`)))
	e.fake.Enqueue(at.Text("Noted, and more to say.", 4).StallAfter(1))
	e.signIn()
	e.send("I drive mornings")
	// The round's usage event came before its tool's result.
	e.waitJS("the tool's result", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "done"`)
	header := `(() => { const b = document.getElementById("budget"); return { used: parseInt(b.title.replace(/,/g, ""), 10), held: Number(b.dataset.held), title: b.title }; })()`
	type shown struct {
		Used  float64 `json:"used"`
		Held  float64 `json:"held"`
		Title string  `json:"title"`
	}
	live := eval[shown](e, header)
	if live.Used >= float64(pre.Estimate) {
		t.Errorf("while the turn runs the header says %+v: the preflight's hold of %d counted as used", live, pre.Estimate)
	}
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()

	// After the turn: what GET /v1/me says, the preflight still held.
	res = e.apiDo("GET", "/v1/me", "", nil, http.StatusOK)
	var me struct {
		Budget struct {
			Used     int64 `json:"tokens_used"`
			Reserved int64 `json:"tokens_reserved"`
		} `json:"budget"`
	}
	err = json.NewDecoder(res.Body).Decode(&me)
	res.Body.Close()
	if err != nil || me.Budget.Reserved != pre.Estimate {
		t.Fatalf("GET /v1/me: %+v, %v; want the preflight's %d held", me.Budget, err, pre.Estimate)
	}
	e.waitJS("the header as GET /v1/me says", `parseInt(document.getElementById("budget").title.replace(/,/g, ""), 10) === `+strconv.FormatInt(me.Budget.Used, 10))
	after := eval[shown](e, header)
	if after.Held != float64(pre.Estimate) {
		t.Errorf("after the turn the header says %+v, want %d held (GET /v1/me's tokens_reserved)", after, pre.Estimate)
	}
}
