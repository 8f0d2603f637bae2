package e2e

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// axNode is the accessibility node of the element sel matches: its
// computed role and name, as a screen reader gets them.
func (e *env) axNode(sel string) (role, name string) {
	e.t.Helper()
	e.run(chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		obj, err := cdp.Call(ctx, t, cdpruntime.Evaluate, cdpruntime.EvaluateParams{Expression: `document.querySelector(` + jsString(sel) + `)`})
		if err != nil {
			return err
		}
		no := false
		res, err := cdp.Call(ctx, t, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: obj.Result.ObjectID, FetchRelatives: &no})
		if err != nil {
			return err
		}
		for _, n := range res.Nodes {
			if n.Ignored {
				continue
			}
			role, name = axString(n.Role), axString(n.Name)
		}
		return nil
	}))
	return role, name
}

func axString(v *accessibility.Value) string {
	var s string
	if v != nil {
		json.Unmarshal(v.Value, &s)
	}
	return s
}

// TestTypingIndicatorAnnounced: the dots shown while the coach starts
// its reply had an aria-label on a plain div, which a screen reader
// ignores (no role to carry it). It is a status now, named so, while the
// reply itself stays out of it.
func TestTypingIndicatorAnnounced(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Hello there.", 0))
	e.signIn()
	release := e.faults.holdNext("POST", "/v1/chat/stream")
	defer release()
	e.send("Hi")
	e.waitJS("the typing indicator", `document.querySelector(".msg.assistant .typing") !== null`)
	if role, name := e.axNode(".msg.assistant .typing"); role != "status" || name != "Coach is replying" {
		t.Errorf("typing indicator: role %q, name %q; want status, \"Coach is replying\"", role, name)
	}
	release()
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Hello there.")`)
	e.waitIdle()
	if n := eval[int](e, `document.querySelectorAll("#live [role=status]").length`); n != 0 {
		t.Errorf("%d status regions left in the transcript after the reply", n)
	}
}
