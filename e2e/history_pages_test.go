package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestLongConversationPages: a conversation of 250 messages was read and
// drawn whole when opened (every page of the API, every message in the
// DOM at once). It now opens at its last page; the ones before it come
// with "Show earlier messages" or by scrolling to the top, drawn above
// without moving what the reader looks at.
func TestLongConversationPages(t *testing.T) {
	e := newEnv(t, 1280, 800, "--rate-limit", "off")
	e.signIn()
	sessID, record := e.recordedSession("Long one")
	const pairs = 125
	for i := 1; i <= pairs; i++ {
		record("user", fmt.Sprintf("Question %d", i))
		record("assistant", fmt.Sprintf("Answer %d", i))
	}
	reads := e.faults.count("GET", "/v1/sessions")
	e.run(chromedp.Navigate(e.url + "/#/" + sessID))
	e.waitJS("the last message", `document.getElementById("transcript").textContent.includes("Answer 125")`)
	e.waitIdle()
	drawn := func() int { return eval[int](e, `document.querySelectorAll(".msg").length`) }
	if n := drawn(); n >= 2*pairs {
		t.Fatalf("%d messages drawn on opening, want the last page only", n)
	}
	if eval[bool](e, `[...document.querySelectorAll(".msg")].some((m) => m.textContent === "Question 1")`) {
		t.Error("the first message is drawn on opening")
	}
	first := drawn()
	// Stored messages are drawn in place: none rises into it. The rise
	// (4 px, 0.22 s) read mid-way moved the message in view by 4 px
	// between two reads on a loaded machine, a frame late.
	moving := `[...document.querySelectorAll("#history .msg")].filter((m) => getComputedStyle(m).animationName !== "none").length`
	if n := eval[int](e, moving); n != 0 {
		t.Errorf("%d stored messages drawn with an animation that moves them, want none", n)
	}

	// Scrolled near the top, the page before is drawn above, and what
	// the reader looks at stays where it was.
	top := `Math.round(document.querySelector(".msg[data-mark]").getBoundingClientRect().top)`
	before := eval[int](e, `(() => { document.querySelector(".msg").dataset.mark = "1"; document.getElementById("scroller").scrollTop = 150; return `+top+`; })()`)
	e.waitJS("a page more", fmt.Sprintf(`document.querySelectorAll(".msg").length > %d`, first))
	// Within a few pixels: the positions are read rounded, the scroll
	// offset is not always where it was set to the pixel.
	if after := eval[int](e, top); after < before-3 || after > before+3 {
		t.Errorf("the message in view moved from %dpx to %dpx when the earlier page came", before, after)
	}
	if n := eval[int](e, moving); n != 0 {
		t.Errorf("%d stored messages drawn with an animation that moves them after the earlier page came, want none", n)
	}
	// The button (for the keyboard, or a page too short to scroll).
	n := drawn()
	e.waitVisible("#earlier-more")
	e.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("earlier-more").click()`))
	e.waitJS("a page more from the button", fmt.Sprintf(`document.querySelectorAll(".msg").length > %d`, n))

	// Scrolling to the top brings the rest.
	for range 4 {
		if !eval[bool](e, `!document.getElementById("earlier-more").hidden`) {
			break
		}
		n := drawn()
		e.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("scroller").scrollTop = 0`))
		e.waitJS("a page more on scrolling up", fmt.Sprintf(`document.querySelectorAll(".msg").length > %d || document.getElementById("earlier-more").hidden`, n))
	}
	e.waitJS("every message", `document.getElementById("earlier-more").hidden`)
	got := eval[[]string](e, `[...document.querySelectorAll(".msg")].map((m) => m.textContent)`)
	if len(got) != 2*pairs {
		t.Fatalf("%d messages drawn, want %d", len(got), 2*pairs)
	}
	for i, text := range got {
		want := fmt.Sprintf("Question %d", i/2+1)
		if i%2 == 1 {
			want = fmt.Sprintf("Answer %d", i/2+1)
		}
		if text != want {
			t.Fatalf("message %d reads %q, want %q", i, text, want)
		}
	}
	if n := e.faults.count("GET", "/v1/sessions") - reads; n > 8 {
		t.Errorf("%d reads of sessions and messages, want a few pages", n)
	}
}

// TestEarlierPageJoinsItsTurn: the rounds of one reply (assistant
// messages one after another) are drawn as one reply; when the page
// boundary fell between two of them, the earlier page's rounds were drawn
// as a reply of their own, beside the rest of it.
func TestEarlierPageJoinsItsTurn(t *testing.T) {
	e := newEnv(t, 1280, 800, "--rate-limit", "off")
	e.signIn()
	sessID, post := e.recordedSession("One long reply")
	post("user", "Tell me everything")
	for i := 1; i <= 101; i++ { // one more than a page
		post("assistant", fmt.Sprintf("Round %d.", i))
	}
	e.run(chromedp.Navigate(e.url + "/#/" + sessID))
	e.waitJS("the last round", `document.getElementById("transcript").textContent.includes("Round 101.")`)
	e.waitIdle()
	e.waitVisible("#earlier-more")
	e.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("earlier-more").click()`))
	e.waitJS("the first message", `document.getElementById("transcript").textContent.includes("Tell me everything")`)
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg")].map((m) => m.classList.contains("user") ? "user" : "reply")`); len(got) != 2 {
		t.Errorf("drawn %v, want [user reply]: the reply's rounds in one", got)
	}
}

// TestEarlierPagesKeepFocus: "Show earlier messages" pressed from the
// keyboard disabled itself while the page came, which dropped the focus
// to the page's body (and hid itself at the conversation's start, with
// the same result): the next Tab started over from the top of the page.
// The focus now stays on the button while pages are left, and goes to
// the conversation's first message once the last one is drawn.
func TestEarlierPagesKeepFocus(t *testing.T) {
	e := newEnv(t, 1280, 800, "--rate-limit", "off")
	e.signIn()
	sessID, record := e.recordedSession("Long one")
	for i := 1; i <= 110; i++ { // three pages of 100
		record("user", fmt.Sprintf("Question %d", i))
		record("assistant", fmt.Sprintf("Answer %d", i))
	}
	e.run(chromedp.Navigate(e.url + "/#/" + sessID))
	e.waitJS("the last message", `document.getElementById("transcript").textContent.includes("Answer 110")`)
	e.waitIdle()
	e.waitVisible("#earlier-more")
	eval[chromedp.Void](e, `document.getElementById("earlier-more").focus()`)
	e.run(pressEnter())
	e.waitJS("the second page", `document.querySelectorAll(".msg").length > 100`)
	if got := eval[string](e, `document.activeElement.id`); got != "earlier-more" {
		t.Errorf("focus on %q after a page came, want the button (pages are left)", got)
	}
	e.run(pressEnter())
	e.waitJS("the first page", `document.getElementById("earlier-more").hidden`)
	if got := eval[string](e, `document.activeElement.closest(".msg")?.textContent || document.activeElement.tagName`); got != "Question 1" {
		t.Errorf("focus on %q after the last page came, want the first message", got)
	}
}

// recordedSession creates a session titled title and returns its id and
// a function that stores a message in it (as a voice line: no turn).
func (e *env) recordedSession(title string) (string, func(role, content string)) {
	e.t.Helper()
	res := e.apiDo("POST", "/v1/sessions", fmt.Sprintf(`{"title":%q}`, title), nil, http.StatusCreated)
	var sess struct{ ID string }
	if err := json.NewDecoder(res.Body).Decode(&sess); err != nil {
		e.t.Fatal(err)
	}
	res.Body.Close()
	return sess.ID, func(role, content string) {
		e.t.Helper()
		body := fmt.Sprintf(`{"role":%q,"content":%q,"source":"voice"}`, role, content)
		e.apiDo("POST", "/v1/sessions/"+sess.ID+"/messages", body, nil, http.StatusCreated).Body.Close()
	}
}
