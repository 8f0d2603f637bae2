package e2e

import (
	"strings"
	"testing"
)

// TestAttachFailedChip: a file the server refuses at upload stays in the
// tray, marked failed, for the user to see and remove; it kept the
// uploading look too (faded, as if still on its way), so a refused file
// read as one still uploading.
func TestAttachFailedChip(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.signIn()
	long := strings.Repeat("a long log line\n", 150<<10/16)
	e.dropFile(long, "log.md", "text/markdown")
	e.waitJS("the refusal", `document.querySelectorAll("#attach-tray li.failed").length === 1`)
	if got := eval[string](e, `document.querySelector("#attach-tray li.failed").className`); strings.Contains(got, "uploading") {
		t.Errorf("the refused file's chip is %q, still shown as uploading", got)
	}
	if got := eval[string](e, `getComputedStyle(document.querySelector("#attach-tray li.failed")).opacity`); got != "1" {
		t.Errorf("the refused file's chip has opacity %s, want 1", got)
	}
}
