package e2e

import (
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestAttachLongNameFitsPhone: on a phone, a file with a long name took
// the chip's whole width, and the label beside it was squeezed to a
// letter a line ("T", "e", "x", "t" under one another in the sent
// message; "1" over "KB" in the tray). The name is cut short instead, and
// the label keeps to one line.
func TestAttachLongNameFitsPhone(t *testing.T) {
	e := newEnv(t, 390, 844)
	e.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	e.fake.Enqueue(at.Text("Read it.", 0))
	e.signIn()
	e.dropFile("hello\n", "a_really_long_file_name_without_spaces_for_the_weekly_training_plan_v2.txt", "text/plain")
	e.waitJS("the upload", `document.querySelector("#attach-tray li:not(.uploading)") !== null`)
	// A label on one line (12px text) is less than 24px tall.
	oneLine := func(sel string) bool {
		return eval[bool](e, `[...document.querySelectorAll("`+sel+`")].every((s) => s.getBoundingClientRect().height < 24)`)
	}
	if !oneLine("#attach-tray .attach-size") {
		t.Errorf("the tray's size label wraps: %v", eval[[]float64](e, `[...document.querySelectorAll("#attach-tray .attach-size")].map((s) => s.getBoundingClientRect().height)`))
	}
	e.send("Read this")
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Read it.")`)
	e.waitIdle()
	if !oneLine(".msg.user .attach-size") {
		t.Errorf("the sent file's label wraps: %v", eval[[]float64](e, `[...document.querySelectorAll(".msg.user .attach-size")].map((s) => s.getBoundingClientRect().height)`))
	}
	e.noOverflow("phone attachment")
}
