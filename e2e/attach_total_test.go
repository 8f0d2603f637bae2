package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAttachTotalLimit: a message's files may hold 10 MiB in all
// (coachd.MaxAttachmentBytesPerMessage), each at most 3 MiB. The UI
// checked each file's size but not the total: four files of almost 3 MiB
// uploaded, and the message was then refused whole ("must be at most 10
// MiB in all"), leaving the user to guess which file to drop. The file
// that would go over is refused as it is attached, named, and the rest
// are sent.
func TestAttachTotalLimit(t *testing.T) {
	// PDFs of a page each: a text document is at most 100 KiB.
	e := newEnv(t, 1280, 800, "--default-budget", "100000000")
	e.fake.Enqueue(at.Text("Three files read.", 0))
	e.signIn()
	eval[chromedp.Void](e, `(() => {
		const dt = new DataTransfer();
		for (let i = 1; i <= 4; i++) dt.items.add(new File(["%PDF-1.4\n" + "a".repeat(3 * 1024 * 1024 - 16)], "log" + i + ".pdf", { type: "application/pdf" }));
		document.getElementById("composer").dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true }));
	})()`)
	e.waitJS("the uploads to finish", `document.querySelectorAll("#attach-tray li").length > 0 && document.querySelectorAll("#attach-tray li.uploading").length === 0`)
	if got := eval[[]string](e, `[...document.querySelectorAll("#attach-tray li")].map((li) => li.title)`); strings.Join(got, ",") != "log1.pdf,log2.pdf,log3.pdf" {
		t.Errorf("tray = %v, want the three files that fit in 10 MiB", got)
	}
	if got := eval[string](e, `document.getElementById("attach-error").textContent`); !strings.Contains(got, "log4.pdf") || !strings.Contains(got, "10 MB") {
		t.Errorf("error line = %q, want log4.pdf refused for the 10 MB total", got)
	}
	e.send("Read these")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Three files read.")`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q, want the message sent", got)
	}
}
