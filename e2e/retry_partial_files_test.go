package e2e

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestRetryPartialReplyWithFile: a message with a file, its reply cut
// short by the AI service failing mid-way; Retry. The page sent the
// message again, files and all, and the server (which never takes a
// message with files for one sent again) stored it a second time: the
// model was then sent the message twice, with the broken reply between.
// Retry now asks the server to run the stored message again ("retry"),
// which leaves the broken reply out: stored once, answered once.
func TestRetryPartialReplyWithFile(t *testing.T) {
	e := newEnv(t, 1280, 800)
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 16, 16))); err != nil {
		t.Fatal(err)
	}
	e.signIn()
	e.fake.Enqueue(at.Text("Half of a reply that breaks off", 4).ErrorAfter(4, "api_error", "upstream broke"))
	e.dropFile(buf.String(), "square.png", "image/png")
	e.waitJS("the upload to finish", `document.querySelector("#attach-tray li:not(.uploading):not(.failed)") !== null`)
	e.send("what is this?")
	e.waitVisible(".banner-retry")
	e.waitIdle()
	e.fake.Enqueue(at.Text("Whole reply.", 0))
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("a new reply, or an error", `document.getElementById("transcript").textContent.includes("Whole reply.") || document.querySelector(".banner-retry, .banner") !== null`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("transcript").textContent`); !strings.Contains(got, "Whole reply.") {
		t.Fatalf("transcript after Retry = %q, want a new reply (banner %q)", got, eval[string](e, `document.getElementById("banner-host").textContent`))
	}
	res := e.apiDo("GET", "/v1/sessions/"+e.oneSession()+"/messages", "", nil, http.StatusOK)
	var page struct {
		Messages []struct{ Role, Content string }
	}
	err := json.NewDecoder(res.Body).Decode(&page)
	res.Body.Close()
	n := 0
	for _, m := range page.Messages {
		if m.Role == "user" {
			n++
		}
	}
	if err != nil || n != 1 {
		t.Errorf("stored user messages = %d (%+v, %v), want 1", n, page.Messages, err)
	}
	reqs := e.fake.Requests()
	if sent := reqs[len(reqs)-1].Messages(); len(sent) != 1 || len(sent[0].Blocks) != 2 || sent[0].Blocks[0].Type != "image" {
		t.Errorf("Retry sent the model %d messages , want the message with its image once", len(sent))
	}
}
