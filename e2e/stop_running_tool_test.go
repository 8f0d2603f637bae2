package e2e

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestStopRunningToolAfterReload: Stop pressed while a tool runs (an
// app's webhook that has not answered) ends the turn; the call is stored
// answered "interrupted" (nothing is known of its effect). Its card said
// one thing live and another after a reload; both now say it was
// stopped, not that it failed.
func TestStopRunningToolAfterReload(t *testing.T) {
	called := make(chan struct{}, 1)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case called <- struct{}{}:
		default:
		}
		<-r.Context().Done() // answers never: the turn's stop ends the call
	}))
	t.Cleanup(app.Close)
	t.Setenv("SLOWPACK_URL", app.URL)
	e := newEnv(t, 1280, 800, "--pack", filepath.Join(repoRoot(t), "e2e", "testdata", "slowpack"), "--webhook-allow", "127.0.0.1/32")
	e.fake.Enqueue(at.Blocks(at.TextBlock("Let me read your report.", 4), at.ToolUse("toolu_slow", "fetch_report", `{}`)))
	e.signIn()
	e.send("How was my week?")
	e.waitJS("the tool card", `document.querySelector(".tool-card[data-tool=fetch_report]") !== null`)
	<-called
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
	card := `[...document.querySelectorAll(".tool-card")].map((c) => c.dataset.state + ":" + c.querySelector(".tool-status").textContent).join(",")`
	live := eval[string](e, card)
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.querySelector(".tool-card[data-tool=fetch_report]") !== null`)
	stored := eval[string](e, card)
	if live != "stopped:Stopped" || stored != live {
		t.Errorf("the interrupted call's card reads %q live and %q after a reload, want stopped:Stopped both times", live, stored)
	}
}
