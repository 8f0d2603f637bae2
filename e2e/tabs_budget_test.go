package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestTabsBudgetHeld: two tabs of the app, on two conversations. A turn
// running in the first holds part of the budget, and its end settles
// it; the second tab's header showed neither (it read the user only
// after its own turns) and went on with whatever it read last. It reads
// the user again when another tab's turn starts and ends.
func TestTabsBudgetHeld(t *testing.T) {
	e := newEnv(t, 1280, 800, "--default-budget", "100000")
	e.fake.Enqueue(at.Text("Start at the airport, and more.", 4).StallAfter(1))
	e.signIn()
	tab, cancel := chromedp.NewContext(e.ctx)
	defer cancel()
	b := *e
	b.ctx = tab
	b.run(chromedp.Navigate(e.url + "/"))
	b.waitJS("the second tab signed in", `document.body.dataset.view === "app" && !document.getElementById("budget").hidden`)

	e.send("Plan my night")
	e.waitJS("the turn under way", `location.hash.startsWith("#/sess_")`)
	b.waitJS("the first tab's hold in the second tab's header", `Number(document.getElementById("budget").dataset.held) > 0`)

	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
	res := e.apiDo("GET", "/v1/me", "", nil, http.StatusOK)
	var me struct {
		Budget struct {
			Used     int64 `json:"tokens_used"`
			Reserved int64 `json:"tokens_reserved"`
		} `json:"budget"`
	}
	err := json.NewDecoder(res.Body).Decode(&me)
	res.Body.Close()
	if err != nil || me.Budget.Reserved != 0 {
		t.Fatalf("GET /v1/me after the stop: %+v, %v", me.Budget, err)
	}
	b.waitJS("the second tab's header as GET /v1/me says", `(() => { const d = document.getElementById("budget").dataset; return d.held === "0" && d.used === "`+strconv.FormatInt(me.Budget.Used, 10)+`"; })()`)
}
