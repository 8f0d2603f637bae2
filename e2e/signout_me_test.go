package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSignInAgainNotStale: the page reads the user again after every
// turn (tokens used, budget). Signed out while that read was on its way,
// and signed in as someone else, the page drew its answer when it came:
// the first user's budget and usage in the header of the second (and
// kept their record as the signed-in user's). An answer read for a key
// signed out is now dropped.
func TestSignInAgainNotStale(t *testing.T) {
	const admin = "adm_e2e_signin_again_key"
	e := newEnv(t, 1280, 800, "--admin-key", admin)
	// The page counts the reads of /v1/me it asked for and the answers
	// it has read (the header is drawn in the same task).
	e.run(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
			window.__me = { asked: 0, read: 0 };
			const isMe = (u) => /\/v1\/me$/.test(String(u));
			const fetch = window.fetch;
			window.fetch = function (u, ...rest) {
				if (isMe(u)) window.__me.asked++;
				return fetch.call(this, u, ...rest);
			};
			const json = Response.prototype.json;
			Response.prototype.json = function () {
				const p = json.call(this);
				if (isMe(this.url)) p.finally(() => window.__me.read++);
				return p;
			};
		})()`})
		return err
	}))
	// A second user, with a budget of their own.
	req, err := http.NewRequest(http.MethodPost, e.url+"/v1/users", strings.NewReader(`{"name":"bea","token_budget":5000}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var bea struct {
		APIKey string `json:"api_key"`
	}
	err = json.NewDecoder(res.Body).Decode(&bea)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusCreated || bea.APIKey == "" {
		t.Fatalf("create a second user: %s, %v", res.Status, err)
	}

	e.fake.Enqueue(at.Text("Airport first.", 0))
	e.signIn()
	answered, release := e.faults.holdAnswerNext("GET", "/v1/me")
	defer release()
	e.send("Where do I start?")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Airport first.")`)
	e.waitIdle()
	select {
	case <-answered: // the demo user, read after the turn, is on its way
	case <-e.ctx.Done():
		t.Fatal("coachd never answered the read of the user after the turn")
	}
	e.run(chromedp.Click(chromedp.CSS("#signout")))
	e.waitVisible("#signin-key")
	e.run(chromedp.Navigate(e.url + "/#key=" + bea.APIKey))
	e.waitJS("bea signed in", `document.getElementById("me-name").textContent === "bea" && !document.getElementById("budget").hidden`)
	want := eval[string](e, `document.getElementById("budget-text").textContent`)
	release()
	e.waitJS("every read of the user answered", `window.__me.read === window.__me.asked`)
	if got := eval[string](e, `document.getElementById("budget-text").textContent`); got != want {
		t.Errorf("bea's header reads %q once the demo user's read came back, want %q (hers)", got, want)
	}
}
