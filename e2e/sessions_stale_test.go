package e2e

import (
	"context"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestSessionListNotStale: the sidebar's list is read again after every
// turn (and at sign-in, when a tab starts a turn, when a conversation
// ends); two reads may be in flight at once, and their answers come back
// in any order. The one asked first, answering last, was drawn last: a
// list read before the user's first message said "No conversations yet"
// beside the conversation on screen, until the next turn. An answer to a
// read older than the one drawn is now dropped.
func TestSessionListNotStale(t *testing.T) {
	e := newEnv(t, 1280, 800)
	// The page counts the list reads it asked for and the answers it has
	// read (the list is drawn in the same task as its answer is read).
	e.run(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `(() => {
			window.__lists = { asked: 0, read: 0 };
			const isList = (u) => /\/v1\/sessions\?/.test(String(u));
			const fetch = window.fetch;
			window.fetch = function (u, ...rest) {
				if (isList(u)) window.__lists.asked++;
				return fetch.call(this, u, ...rest);
			};
			const json = Response.prototype.json;
			Response.prototype.json = function () {
				const p = json.call(this);
				if (isList(this.url)) p.finally(() => window.__lists.read++);
				return p;
			};
		})()`})
		return err
	}))
	e.fake.Enqueue(at.Text("Airport first.", 0))
	answered, release := e.faults.holdAnswerNext("GET", "/v1/sessions")
	defer release()
	e.signIn()
	select {
	case <-answered: // the list at sign-in, read empty, is on its way
	case <-e.ctx.Done():
		t.Fatal("coachd never answered the list at sign-in")
	}
	e.send("Where do I start?")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Airport first.")`)
	e.waitIdle()
	e.waitJS("the conversation in the list", `document.querySelectorAll("#session-list .session").length === 1`)
	release()
	e.waitJS("every list read answered", `window.__lists.asked > 1 && window.__lists.read === window.__lists.asked`)
	if n := eval[int](e, `document.querySelectorAll("#session-list .session").length`); n != 1 {
		t.Errorf("%d conversations listed once the list read at sign-in came back, want 1 (%q)", n, eval[string](e, `document.getElementById("sidebar").textContent`))
	}
}
