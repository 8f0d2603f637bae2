package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAttachPaste: a screenshot pasted into the composer (Ctrl+V) is
// attached like a dropped or picked file; the page ignored pasted files,
// so a copied image could not be sent without saving it first. Pasted
// text is still typed as text.
func TestAttachPaste(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("I see a note.", 0))
	e.signIn()
	e.run(chromedp.Click(chromedp.CSS("#input")))
	eval[chromedp.Void](e, `(() => {
		const dt = new DataTransfer();
		dt.items.add(new File(["remember the airport queue\n"], "clip.txt", { type: "text/plain" }));
		document.getElementById("input").dispatchEvent(new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }));
	})()`)
	e.waitJS("the pasted file in the tray", `document.querySelector("#attach-tray li:not(.uploading):not(.failed)")?.title === "clip.txt" || !document.getElementById("attach-error").hidden`)
	if !eval[bool](e, `document.getElementById("attach-error").hidden`) {
		t.Fatalf("error: %s", eval[string](e, `document.getElementById("attach-error").textContent`))
	}
	e.send("What did I paste?")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("I see a note.")`)
	e.waitIdle()
	reqs := e.fake.Requests()
	msgs := reqs[len(reqs)-1].Messages()
	last := msgs[len(msgs)-1].Blocks
	if len(last) != 2 || last[0].Type != "document" || last[1].Text != "What did I paste?" {
		t.Errorf("the model got %+v, want the pasted file and the text", last)
	}
}
