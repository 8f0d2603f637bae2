package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestScreens plays a short conversation, checks the layout at desktop and
// phone widths (no horizontal overflow on a phone), and with
// -update-screenshots writes docs/screenshot-*.png.
func TestScreens(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.seedNotes()
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("Happy to help you get back into it. First, let me remember your goal.", 6),
			at.ToolUse("toolu_goal", "save_note", `{"note_type":"insight","title":"Goal: run 5k again","content":"Wants to get back to running a comfortable 5k by spring."}`)).
			Paced(0, 10*time.Millisecond),
		at.Blocks(at.TextBlock("Here is a gentle first week:\n\n1. **Monday**: 20 minutes, easy\n2. **Wednesday**: 25 minutes with four short pickups\n3. **Saturday**: 30 minutes at a *conversational* pace\n\nKeep every run easy enough to talk. When do you usually have time?", 8),
			at.ToolUse("toolu_when", "show_options", `{"prompt":"When do you usually have time?","options":["Early morning","Lunch break","Evening"]}`)).
			Paced(0, 10*time.Millisecond),
		at.Text("Early mornings it is. Lay out your kit the night before, so the first step out of the door is the easy one. I will check in after your first week.", 10).
			Paced(0, 10*time.Millisecond),
	)
	e.signIn()
	e.send("I want to get back into running. Can you help me plan my week?")
	e.waitVisible(".interaction .pill")
	e.waitIdle()
	e.run(chromedp.Click(chromedp.CSS(`.pill[data-value="Early morning"]`)))
	e.waitJS("the last reply", `document.getElementById("transcript").textContent.includes("check in after your first week")`)
	e.waitIdle()
	e.waitJS("the budget", `document.getElementById("budget-text").textContent !== ""`)
	e.run(chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`))
	e.settle()
	e.screenshot("screenshot-desktop.png")

	e.openNotes()
	e.waitJS("the notes panel", `document.querySelectorAll(".note-list .note").length === 3`)
	e.screenshot("screenshot-notes.png")
	e.run(chromedp.Click(chromedp.CSS("#notes-close")))
	e.settle()

	e.run(chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	e.run(chromedp.Reload())
	e.waitJS("the history", `document.getElementById("transcript").textContent.includes("check in after your first week")`)
	e.settle()
	e.noOverflow("phone chat")
	e.screenshot("screenshot-phone.png")

	e.openNotes()
	e.waitJS("the notes panel", `document.querySelectorAll(".note-list .note").length === 3`)
	e.noOverflow("phone notes")
	e.screenshot("screenshot-phone-notes.png")
	e.run(chromedp.Click(chromedp.CSS("#notes-close")))
	e.settle()
	e.run(chromedp.Click(chromedp.CSS("#sidebar-open")))
	e.settle()
	e.noOverflow("phone menu")
}

// seedNotes stores a few notes through the API.
func (e *env) seedNotes() {
	e.t.Helper()
	for _, n := range []map[string]any{
		{"note_type": "preference", "title": "Prefers morning runs", "content": "Runs before work; evenings are for family.", "importance": 70},
		{"note_type": "tip", "title": "Knee: build up slowly", "content": "Left knee complains after long runs. Add no more than 10% a week.", "importance": 90},
	} {
		body, _ := json.Marshal(n)
		req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/notes", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+e.key)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			e.t.Fatal(err)
		}
		var created struct{ ID string }
		json.NewDecoder(res.Body).Decode(&created)
		res.Body.Close()
		if res.StatusCode != http.StatusCreated {
			e.t.Fatalf("create note: %s", res.Status)
		}
		if n["importance"] == 90 {
			req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/notes/"+created.ID+"/pin", nil)
			req.Header.Set("Authorization", "Bearer "+e.key)
			if res, err := http.DefaultClient.Do(req); err != nil {
				e.t.Fatal(err)
			} else {
				res.Body.Close()
			}
		}
	}
}

// settle waits until no animation or transition is running, so a
// screenshot never catches a panel halfway.
func (e *env) settle() {
	e.t.Helper()
	e.waitJS("animations to finish", `document.getAnimations().filter(a => a.playState === "running" && isFinite(a.effect?.getComputedTiming().endTime)).length === 0`)
}

// noOverflow fails when anything on screen is wider than the viewport.
func (e *env) noOverflow(where string) {
	e.t.Helper()
	type wide struct {
		Sel   string  `json:"sel"`
		Right float64 `json:"right"`
	}
	got := eval[[]wide](e, `(() => {
		const w = window.innerWidth, out = [];
		if (document.documentElement.scrollWidth > w) out.push({ sel: "html scrollWidth", right: document.documentElement.scrollWidth });
		const sc = document.getElementById("scroller");
		if (sc.scrollWidth > sc.clientWidth) out.push({ sel: "#scroller scrollWidth", right: sc.scrollWidth });
		for (const el of document.querySelectorAll("#app *")) {
			const cs = getComputedStyle(el);
			if (cs.visibility === "hidden" || cs.display === "none" || el.closest("[aria-hidden=true]")) continue;
			const r = el.getBoundingClientRect();
			if (r.width > 0 && r.right > w + 0.5 && !el.closest("pre, .tool-pre")) {
				out.push({ sel: el.tagName.toLowerCase() + "." + [...el.classList].join("."), right: r.right });
			}
		}
		return out.slice(0, 10);
	})()`)
	if len(got) > 0 {
		e.t.Errorf("%s: wider than the viewport: %+v", where, got)
	}
}

// screenshot writes docs/<name> when -update-screenshots is set.
func (e *env) screenshot(name string) {
	e.t.Helper()
	png, err := chromedp.Run(e.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		e.t.Fatal(err)
	}
	if !*updateScreenshots {
		return
	}
	path := filepath.Join(repoRoot(e.t), "docs", name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		e.t.Fatal(err)
	}
	e.t.Logf("wrote %s", path)
}
