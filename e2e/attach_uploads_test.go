package e2e

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/coachd/coachd"
	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// upload POSTs a small text file to /v1/uploads as the demo user.
func (e *env) upload(name string) {
	e.t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		e.t.Fatal(err)
	}
	fmt.Fprintf(part, "notes in %s\n", name)
	w.Close()
	req, err := http.NewRequest(http.MethodPost, e.url+"/v1/uploads", &body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	req.Header.Set("Content-Type", w.FormDataContentType())
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		e.t.Fatalf("upload %s: %s", name, res.Status)
	}
}

// TestAttachmentsFreeUploads: the browser sends a message's files as
// uploads, and the stored message keeps its own copy of them. The UI
// deletes an upload once its message is stored (or its chip is removed),
// so a user attaching files for weeks never reaches the per-user upload
// caps, which nothing in the UI could free: past them every attachment
// failed with "upload limit reached: delete some first".
func TestAttachmentsFreeUploads(t *testing.T) {
	e := newEnv(t, 1280, 800)
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 8, 8))); err != nil {
		t.Fatal(err)
	}
	drop := func(name string) {
		e.dropFile(buf.String(), name, "image/png")
		e.waitJS("the upload of "+name, `document.querySelector('#attach-tray li[title="`+name+`"]:is(:not(.uploading), .failed)') !== null`)
		if !eval[bool](e, `document.getElementById("attach-error").hidden`) {
			t.Fatalf("%s: %s", name, eval[string](e, `document.getElementById("attach-error").textContent`))
		}
	}
	deletes := `performance.getEntriesByType("resource").filter((r) => /\/v1\/uploads\/upl_/.test(r.name)).length`
	e.fake.Enqueue(at.Text("A grey square.", 8))
	e.signIn()
	// A user who has attached files for a while: one upload short of the cap.
	for i := range coachd.MaxUploadsPerUser - 1 {
		e.upload(fmt.Sprintf("week-%d.txt", i))
	}
	drop("one.png")
	e.send("what is this?")
	e.waitIdle()
	e.waitJS("the sent file's upload to be deleted", deletes+` === 1`)
	drop("two.png")
	e.run(chromedp.Click(chromedp.CSS(`#attach-tray li[title="two.png"] .attach-remove`)))
	e.waitJS("the removed file's upload to be deleted", deletes+` === 2`)
	drop("three.png")
}
