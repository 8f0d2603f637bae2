package e2e

import (
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestSessionListFailure: when the list of conversations failed to load
// (a 503, the network), the sidebar said "No conversations yet." to a
// user who had some, and offered nothing to do about it. It now says the
// list could not be loaded, with a button that loads it again.
func TestSessionListFailure(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.apiDo("POST", "/v1/sessions", `{"title":"Saturday plan"}`, nil, http.StatusCreated).Body.Close()
	e.faults.failNext("GET", "/v1/sessions", http.StatusServiceUnavailable)
	e.signIn()
	e.waitVisible("#session-empty")
	if got := eval[string](e, `document.getElementById("session-empty").textContent`); got == "No conversations yet." {
		t.Fatalf("the sidebar says %q after its list failed to load", got)
	}
	e.waitVisible("#session-retry")
	e.run(chromedp.Click(chromedp.CSS("#session-retry")))
	e.waitJS("the list", `[...document.querySelectorAll("#session-list .session-title")].some((s) => s.textContent === "Saturday plan")`)
	if !eval[bool](e, `document.getElementById("session-empty").hidden && document.getElementById("session-retry").hidden`) {
		t.Error("the failure still shows beside the list")
	}
}
