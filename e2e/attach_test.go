package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// dropJS drops a file made in the page onto the composer, as a user
// dragging it from their desktop would.
const dropJS = `((b64, name, type, size) => {
	let bytes;
	if (b64) {
		const bin = atob(b64);
		bytes = new Uint8Array(bin.length);
		for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
	} else {
		bytes = new Uint8Array(size);
	}
	const dt = new DataTransfer();
	dt.items.add(new File([bytes], name, { type }));
	const zone = document.getElementById("composer");
	zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: dt, bubbles: true, cancelable: true }));
	zone.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
})`

// dropFile drops a file of data, named name and typed typ, onto the
// composer (dropJS).
func (e *env) dropFile(data, name, typ string) {
	e.t.Helper()
	args, _ := json.Marshal([]any{base64.StdEncoding.EncodeToString([]byte(data)), name, typ, 0})
	eval[chromedp.Void](e, dropJS+`(...`+string(args)+`)`)
}

// sentDocuments are the titles of the documents in the last message of
// the model's last request.
func (e *env) sentDocuments() []string {
	reqs := e.fake.Requests()
	msgs := reqs[len(reqs)-1].Messages()
	var docs []string
	for _, b := range msgs[len(msgs)-1].Blocks {
		if b.Type == "document" {
			var title string
			json.Unmarshal(b.Extra["title"], &title)
			docs = append(docs, title)
		}
	}
	return docs
}

func TestAttachImage(t *testing.T) {
	e := newEnv(t, 1280, 800)
	img := image.NewRGBA(image.Rect(0, 0, 16, 16))
	for i := range img.Pix {
		img.Pix[i] = 0xc0
	}
	img.Set(3, 3, color.Black)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	e.fake.Enqueue(at.Text("What a square.", 8))
	e.signIn()

	t.Run("ErrOversize", func(t *testing.T) {
		e := e.sub(t)
		eval[chromedp.Void](e, dropJS+`("", "huge.png", "image/png", 3*1024*1024+1)`)
		e.waitVisible("#attach-error")
		if got := eval[string](e, `document.getElementById("attach-error").textContent`); !bytes.Contains([]byte(got), []byte("huge.png")) {
			t.Errorf("error line %q does not name the file", got)
		}
		if n := eval[int](e, `document.querySelectorAll("#attach-tray li").length`); n != 0 {
			t.Errorf("%d files in the tray, want none", n)
		}
		if n := eval[int](e, `performance.getEntriesByType("resource").filter((r) => r.name.includes("/v1/uploads")).length`); n != 0 {
			t.Errorf("%d uploads sent for a refused file", n)
		}
	})

	t.Run("ThumbnailAfterReload", func(t *testing.T) {
		e := e.sub(t)
		e.dropFile(buf.String(), "square.png", "image/png")
		e.waitJS("the upload to finish", `document.querySelector("#attach-tray li:not(.uploading):not(.failed)") !== null`)
		if !eval[bool](e, `document.getElementById("attach-error").hidden`) {
			t.Fatalf("error shown: %s", eval[string](e, `document.getElementById("attach-error").textContent`))
		}
		e.send("what is this?")
		e.waitIdle()
		e.waitJS("the tray to empty", `document.querySelectorAll("#attach-tray li").length === 0`)
		e.waitJS("the session in the URL", `location.search.includes("sess_") || location.hash.includes("sess_") || location.pathname.includes("sess_")`)
		e.run(chromedp.Reload())
		e.waitJS("the thumbnail in history", `(() => {
			const img = document.querySelector(".msg.user img.attach-thumb");
			return img !== null && img.complete && img.naturalWidth === 16 && img.src.startsWith("data:image/png;base64,");
		})()`)
		if got := eval[string](e, `document.querySelector(".msg.user .bubble-text")?.textContent || ""`); got != "what is this?" {
			t.Errorf("user text after reload = %q", got)
		}
		// The demo-free fake got the image block ahead of the text.
		reqs := e.fake.Requests()
		msgs := reqs[len(reqs)-1].Messages()
		last := msgs[len(msgs)-1].Blocks
		if len(last) != 2 || last[0].Type != "image" || last[1].Text != "what is this?" {
			t.Errorf("the model got %+v", last)
		}
	})

	// A file sent with a message leaves the tray as the reply starts; a
	// file attached while the reply is written waits for the next message.
	t.Run("AttachDuringReply", func(t *testing.T) {
		e := e.sub(t)
		e.fake.Enqueue(at.Text("Two squares now, and more to say about them", 4).Paced(0, 20*time.Millisecond).StallAfter(8))
		e.dropFile(buf.String(), "first.png", "image/png")
		e.waitJS("the first upload", `document.querySelector("#attach-tray li:not(.uploading)")?.title === "first.png"`)
		e.send("and this one?")
		e.waitJS("the reply to start", `document.querySelectorAll(".msg.assistant").length === 2 && document.querySelectorAll(".msg.assistant")[1].textContent.includes("squares")`)
		if names := eval[[]string](e, `[...document.querySelectorAll("#attach-tray li")].map((li) => li.title)`); len(names) != 0 {
			t.Errorf("tray while the reply is written = %v, want the sent file gone", names)
		}
		e.dropFile(buf.String(), "second.png", "image/png")
		e.waitJS("the second upload", `[...document.querySelectorAll("#attach-tray li:not(.uploading)")].some((li) => li.title === "second.png")`)
		e.run(chromedp.Click(chromedp.CSS("#stop")))
		e.waitIdle()
		if names := eval[[]string](e, `[...document.querySelectorAll("#attach-tray li")].map((li) => li.title)`); len(names) != 1 || names[0] != "second.png" {
			t.Errorf("tray after the turn = %v, want [second.png] kept for the next message", names)
		}
	})
}
