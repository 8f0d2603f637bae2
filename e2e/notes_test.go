package e2e

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/chromedp/chromedp"
)

// noteTitles is the JS for the titles of the live notes, in order.
const noteTitles = `[...document.querySelectorAll(".note-list .note-title")].map(n => n.textContent)`

func TestNotes(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.signIn()
	e.openNotes()
	e.waitVisible(".notes-empty")

	create := func(e *env, title, content string) {
		e.t.Helper()
		e.run(
			chromedp.Click(chromedp.CSS(".add-note")),
			chromedp.WaitVisible(chromedp.CSS(".note-form")),
			chromedp.SendKeys(chromedp.CSS(`.note-form [name=title]`), title),
			chromedp.SendKeys(chromedp.CSS(`.note-form [name=content]`), content),
			chromedp.Click(chromedp.CSS(`.note-form button[type=submit]`)),
		)
	}
	// note is the JS for the live note card with this title.
	note := func(title string) string {
		return `[...document.querySelectorAll(".note-list .note")].find(n => n.querySelector(".note-title")?.textContent === ` + jsString(title) + `)`
	}

	t.Run("Create", func(t *testing.T) {
		e := e.sub(t)
		create(e, "Morning runs", "Runs before work, around 6am.")
		create(e, "Knee", "Left knee gets sore after long runs.")
		e.waitJS("both notes saved", `[...document.querySelectorAll(".note-list .note")].filter(n => !n.classList.contains("pending")).length === 2`)
		if got := eval[int](e, `+document.getElementById("notes-count").textContent`); got != 2 {
			t.Errorf("notes count badge = %d, want 2", got)
		}
	})
	t.Run("Pin", func(t *testing.T) {
		e := e.sub(t)
		// The pinned note goes first, whatever the order was.
		e.run(chromedp.Evaluate[chromedp.Void](note("Knee") + `.querySelector(".note-pin").click()`))
		e.waitJS("the pinned note first, saved", `(() => { const n = document.querySelector(".note-list .note"); return n.classList.contains("pinned") && !n.classList.contains("pending") && n.querySelector(".note-title").textContent === "Knee"; })()`)
	})
	t.Run("EditKeptAcrossChanges", func(t *testing.T) {
		// A change elsewhere in the panel (here: unpinning another note)
		// redraws the list; the note being edited keeps what was typed,
		// and where the cursor was.
		e := e.sub(t)
		e.run(chromedp.Evaluate[chromedp.Void](note("Morning runs") + `.querySelector(".note-edit").click()`))
		e.waitVisible("form.note-editor")
		e.run(chromedp.SendKeys(chromedp.CSS("form.note-editor [name=content]"), " Not on Sundays."))
		e.run(chromedp.Evaluate[chromedp.Void](note("Knee") + `.querySelector(".note-pin").click()`))
		e.waitJS("the unpin saved", note("Knee")+`?.classList.contains("pending") === false && !`+note("Knee")+`.classList.contains("pinned")`)
		if got := eval[string](e, `document.querySelector("form.note-editor [name=content]")?.value ?? "(no editor)"`); got != "Runs before work, around 6am. Not on Sundays." {
			t.Errorf("editor content after the redraw = %q, want the typed text kept", got)
		}
		if !eval[bool](e, `document.activeElement === document.querySelector("form.note-editor [name=content]")`) {
			t.Error("the editor lost the focus in the redraw")
		}
		// Leave things as they were for the subtests after this one.
		e.run(chromedp.Click(chromedp.CSS("form.note-editor .btn.ghost")))
		e.run(chromedp.Evaluate[chromedp.Void](note("Knee") + `.querySelector(".note-pin").click()`))
		e.waitJS("Knee pinned again", note("Knee")+`?.classList.contains("pending") === false && `+note("Knee")+`.classList.contains("pinned")`)
	})
	t.Run("ErrDeleteRollsBack", func(t *testing.T) {
		e := e.sub(t)
		e.faults.failNext("DELETE", "/v1/notes/", 500)
		// At once — in the same task as the click, before any answer can
		// arrive — the note is gone from the list (optimistic)…
		if eval[bool](e, `(() => { `+note("Morning runs")+`.querySelector(".note-trash").click(); return `+note("Morning runs")+` !== undefined; })()`) {
			t.Error("the note is still listed right after delete")
		}
		// …then the failure puts it back, visibly.
		e.waitJS("the note back, flashing", note("Morning runs")+`?.classList.contains("rolled-back") === true`)
		e.waitJS("a toast saying so", `[...document.querySelectorAll(".toast")].some(t => t.textContent.includes("Couldn't delete the note"))`)
		if !eval[bool](e, `document.querySelector(".deleted").hidden`) {
			t.Error("the rolled-back note is still under Recently deleted")
		}
	})
	t.Run("ErrEditRollsBack", func(t *testing.T) {
		e := e.sub(t)
		e.faults.failNext("PUT", "/v1/notes/", 500)
		e.run(chromedp.Evaluate[chromedp.Void](note("Morning runs") + `.querySelector(".note-edit").click()`))
		e.waitVisible("form.note-editor")
		e.run(
			chromedp.Evaluate[chromedp.Void](`document.querySelector("form.note-editor [name=title]").value = ""`),
			chromedp.SendKeys(chromedp.CSS("form.note-editor [name=title]"), "Evening runs"),
			chromedp.Click(chromedp.CSS("form.note-editor button[type=submit]")),
		)
		e.waitJS("the old title back, flashing", note("Morning runs")+`?.classList.contains("rolled-back") === true`)
		if eval[bool](e, note("Evening runs")+` !== undefined`) {
			t.Error("the failed edit is still shown")
		}
	})
	t.Run("Edit", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Evaluate[chromedp.Void](note("Morning runs") + `.querySelector(".note-edit").click()`))
		e.waitVisible("form.note-editor")
		e.run(
			chromedp.Evaluate[chromedp.Void](`document.querySelector("form.note-editor [name=title]").value = ""`),
			chromedp.SendKeys(chromedp.CSS("form.note-editor [name=title]"), "Early runs"),
			chromedp.Click(chromedp.CSS("form.note-editor button[type=submit]")),
		)
		e.waitJS("the edit saved", note("Early runs")+`?.classList.contains("pending") === false`)
	})
	t.Run("DeleteRestore", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Evaluate[chromedp.Void](note("Early runs") + `.querySelector(".note-trash").click()`))
		e.waitJS("the note under Recently deleted", `!document.querySelector(".deleted").hidden && [...document.querySelectorAll(".deleted-note:not(.pending) .note-title")].some(n => n.textContent === "Early runs")`)
		e.run(
			chromedp.Click(chromedp.CSS(".deleted summary")),
			chromedp.Click(chromedp.CSS(".deleted-note .note-restore")),
		)
		e.waitJS("the note restored", note("Early runs")+`?.classList.contains("pending") === false && document.querySelector(".deleted").hidden`)
	})
	t.Run("ErrRestoreRollsBack", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Evaluate[chromedp.Void](note("Knee") + `.querySelector(".note-trash").click()`))
		e.waitJS("Knee deleted", `[...document.querySelectorAll(".deleted-note:not(.pending) .note-title")].some(n => n.textContent === "Knee")`)
		e.faults.failNext("POST", "/v1/notes/", 500)
		e.run(chromedp.Evaluate[chromedp.Void](`[...document.querySelectorAll(".deleted-note")].find(n => n.textContent.includes("Knee")).querySelector(".note-restore").click()`))
		e.waitJS("Knee back under deleted, flashing", `document.querySelector(".deleted-note.rolled-back")?.textContent.includes("Knee") === true`)
	})
	t.Run("Persisted", func(t *testing.T) {
		e := e.sub(t)
		// What the server kept is what the panel showed.
		e.run(chromedp.Reload())
		e.waitVisible("#notes-open")
		e.openNotes()
		e.waitJS("the notes", `document.querySelectorAll(".note-list .note").length === 1`)
		if got := eval[[]string](e, noteTitles); len(got) != 1 || got[0] != "Early runs" {
			t.Errorf("notes after reload = %v, want [Early runs]", got)
		}
		if got := eval[string](e, `document.querySelector(".deleted-note .note-title").textContent`); got != "Knee" {
			t.Errorf("deleted note = %q, want Knee", got)
		}
	})
	t.Run("MoreThanOnePage", func(t *testing.T) {
		// The coach saves notes as it goes (up to 1,000 live ones); the
		// panel lists them all, not the first page of 200.
		e := e.sub(t)
		for i := range 205 {
			e.create("/v1/notes", fmt.Sprintf(`{"note_type":"tip","title":"Tip %d","content":"Drink water before run %d."}`, i, i))
		}
		e.run(chromedp.Reload())
		e.waitVisible("#notes-open")
		e.openNotes()
		e.waitJS("every note listed", `document.querySelectorAll(".note-list .note").length === 206 && document.getElementById("notes-count").textContent === "206"`)
	})
}

// jsString quotes s as a JavaScript string literal (JSON is one).
func jsString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}
