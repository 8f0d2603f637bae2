package e2e

import (
	"encoding/base64"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

const longReply = "Here is a plan for your week. **Monday**: an easy run, thirty minutes. " +
	"*Wednesday*: intervals, six by two minutes. Friday: rest, and stretch well. " +
	"Keep a note of how each session felt, so we can adjust next week."

func TestSignIn(t *testing.T) {
	e := newEnv(t, 1280, 800)
	t.Run("ErrBadKey", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Navigate(e.url + "/"))
		e.waitVisible("#signin-key")
		e.run(
			chromedp.SendKeys(chromedp.CSS("#signin-key"), "ck_wrong"),
			chromedp.Click(chromedp.CSS("#signin-submit")),
		)
		e.waitVisible("#signin-error")
	})
	t.Run("OK", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("signin-key").value = ""`))
		e.run(
			chromedp.SendKeys(chromedp.CSS("#signin-key"), e.key),
			chromedp.Click(chromedp.CSS("#signin-submit")),
		)
		e.waitVisible("#composer")
		e.waitVisible("#welcome")
		if got := eval[string](e, `document.getElementById("me-name").textContent`); got != "demo" {
			t.Errorf("signed in as %q, want demo", got)
		}
	})
	t.Run("FragmentKey", func(t *testing.T) {
		e := e.sub(t)
		e.run(chromedp.Evaluate[chromedp.Void](`localStorage.clear()`))
		e.signIn() // checks the fragment is cleared and the key stored
	})
}

func TestStreamingReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	// Eight runes per delta, 25 ms apart: the reply arrives over many
	// frames.
	e.fake.Enqueue(at.Text(longReply, 8).Paced(50*time.Millisecond, 25*time.Millisecond))
	e.signIn()
	e.recordPhases()
	// Record the text length at every change to see it grow.
	eval[chromedp.Void](e, `(() => {
		window.__lens = [];
		new MutationObserver(() => {
			const md = document.querySelector(".msg.assistant .md");
			if (md) window.__lens.push(md.textContent.length);
		}).observe(document.getElementById("transcript"), { childList: true, subtree: true, characterData: true });
	})()`)
	e.send("Plan my week")
	e.waitJS("the stop button while streaming", `!document.getElementById("stop").hidden`)
	e.waitJS("the reply to finish", `document.querySelector(".msg.assistant .md")?.textContent.includes("adjust next week")`)
	e.waitIdle()

	lens := eval[[]int](e, `[...new Set(window.__lens)]`)
	if len(lens) < 4 {
		t.Errorf("the reply appeared in %d steps (%v), want it to grow over several frames", len(lens), lens)
	}
	phases := eval[[]string](e, `window.__rec.phases`)
	if strings.Join(phases, ",") != "idle,streaming,completing,idle" {
		t.Errorf("phases = %v, want idle,streaming,completing,idle", phases)
	}
	// Markdown became elements, and the send button is back.
	if n := eval[int](e, `document.querySelectorAll(".msg.assistant .md strong, .msg.assistant .md em").length`); n != 2 {
		t.Errorf("found %d strong/em elements, want 2", n)
	}
	if !eval[bool](e, `document.getElementById("stop").hidden && !document.getElementById("send").hidden`) {
		t.Error("the stop button is still shown after the turn")
	}
	// The session is in the URL and in the list.
	e.waitJS("the session in the list", `document.querySelector(".session.active .session-title")?.textContent.length > 0`)
	if !eval[bool](e, `location.hash.startsWith("#/sess_")`) {
		t.Error("the session id is not in the URL")
	}
	// Reloading shows the stored history.
	e.run(chromedp.Reload())
	e.waitJS("the history", `document.querySelector(".msg.assistant .md")?.textContent.includes("adjust next week")`)
	if got := eval[string](e, `document.querySelector(".msg.user .bubble").textContent`); got != "Plan my week" {
		t.Errorf("user message = %q", got)
	}
}

func TestToolShimmerThenCard(t *testing.T) {
	e := newEnv(t, 1280, 800)
	input := `{"note_type":"preference","title":"Morning runs","content":"Prefers to run before work."}`
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("Let me remember that.", 5), at.ToolUse("toolu_save1", "save_note", input)).
			Paced(20*time.Millisecond, 20*time.Millisecond),
		at.Text("Saved. I will plan around your mornings.", 6).Paced(300*time.Millisecond, 20*time.Millisecond),
	)
	e.signIn()
	e.recordPhases()
	e.send("I like to run in the morning")
	e.waitJS("the tool card with its result", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "done"`)
	e.waitJS("the second round", `document.querySelector(".msg.assistant")?.textContent.includes("plan around your mornings")`)
	e.waitIdle()

	type shimmer struct {
		Text  string  `json:"text"`
		MS    float64 `json:"ms"`
		AtEnd bool    `json:"atEnd"`
	}
	rec := eval[struct {
		Phases  []string  `json:"phases"`
		Shimmer []shimmer `json:"shimmer"`
	}](e, `window.__rec`)
	if got := strings.Join(rec.Phases, ","); got != "idle,streaming,toolExecuting,streaming,completing,idle" {
		t.Errorf("phases = %s", got)
	}
	if len(rec.Shimmer) != 1 {
		t.Fatalf("shimmer shown %d times, want once: %+v", len(rec.Shimmer), rec.Shimmer)
	}
	// At least 200 ms (less a timer's rounding to whole milliseconds),
	// unless the turn ended sooner: the fake's second round waits 300 ms
	// before its first event, so that happens only when the page gets the
	// tool's events late, on a loaded machine, and the turn's end takes
	// every indicator down.
	if s := rec.Shimmer[0]; !strings.Contains(s.Text, "Save note") || (s.MS < 198 && !s.AtEnd) {
		t.Errorf("shimmer = %+v, want the tool name shown for at least 200 ms, or until the turn's end", s)
	}
	if got := eval[string](e, `document.querySelector(".tool-card .tool-pre").textContent`); !strings.Contains(got, "Morning runs") {
		t.Errorf("tool card result = %q, want the saved note", got)
	}
	// The text before the tool and after it are separate paragraphs.
	if n := eval[int](e, `document.querySelectorAll(".msg.assistant .md").length`); n != 2 {
		t.Errorf("%d text segments, want 2 (before and after the tool)", n)
	}
	// The saved note shows in the notes panel.
	e.openNotes()
	e.waitJS("the note in the panel", `[...document.querySelectorAll(".note-list .note-title")].some(n => n.textContent === "Morning runs")`)
	// History draws the card from the stored blocks.
	e.run(chromedp.Reload())
	e.waitJS("the stored tool card", `document.querySelector(".tool-card[data-tool=save_note]")?.dataset.state === "done"`)
}

func TestShowOptions(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("When do you train best?", 0),
			at.ToolUse("toolu_opt1", "show_options", `{"prompt":"Pick a time","options":["Morning","Lunch","Evening"]}`)),
		at.Text("Morning it is. Early sessions are easier to keep.", 6).Paced(0, 15*time.Millisecond),
	)
	e.signIn()
	e.send("Help me pick a training time")
	e.waitVisible(".interaction .pill")
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".interaction-prompt").textContent`); got != "Pick a time" {
		t.Errorf("prompt = %q", got)
	}
	// Two clicks in the same task: the second must do nothing.
	eval[chromedp.Void](e, `(() => {
		const pills = document.querySelectorAll(".interaction .pill");
		pills[0].click(); pills[2].click(); pills[0].click();
	})()`)
	e.waitJS("the resumed reply", `document.querySelector("#transcript")?.textContent.includes("Early sessions are easier")`)
	e.waitIdle()
	if n := e.faults.count("POST", "/v1/chat/stream"); n != 2 {
		t.Errorf("%d chat requests, want 2 (the message and one answer)", n)
	}
	if got := eval[string](e, `document.querySelector(".pill.chosen").textContent`); got != "Morning" {
		t.Errorf("chosen pill = %q", got)
	}
	if !eval[bool](e, `[...document.querySelectorAll(".interaction .pill")].every(p => p.disabled)`) {
		t.Error("pills are still enabled after answering")
	}
	if got := eval[string](e, `document.querySelector(".msg.user.answer .bubble").textContent`); got != "Morning" {
		t.Errorf("answer bubble = %q", got)
	}
	// The model received the pick as the tool's result.
	reqs := e.fake.Requests()
	last := reqs[len(reqs)-1]
	if trs := last.ToolResults(); len(trs) != 1 || !strings.Contains(trs[0].ResultText(), "Morning") {
		t.Errorf("tool results sent to the model = %+v", trs)
	}
	// After a reload the answered options stay answered.
	e.run(chromedp.Reload())
	e.waitJS("the history", `document.querySelector(".pill.chosen")?.textContent === "Morning"`)
	if !eval[bool](e, `[...document.querySelectorAll(".interaction .pill")].every(p => p.disabled)`) {
		t.Error("stored options are clickable again")
	}
}

func TestStopMidStream(t *testing.T) {
	e := newEnv(t, 1280, 800)
	// Ten events: message_start, content_block_start, ping and seven
	// deltas ("I was just getting started o"),
	// then nothing until the client goes away.
	e.fake.Enqueue(at.Text("I was just getting started on a long answer about pacing", 4).
		Paced(0, 20*time.Millisecond).StallAfter(10))
	e.signIn()
	e.send("Tell me about pacing")
	e.waitJS("partial text", `document.querySelector(".msg.assistant .md")?.textContent.includes("getting started")`)
	if got := eval[string](e, `document.body.dataset.phase`); got != "streaming" {
		t.Fatalf("phase while stalled = %q, want streaming", got)
	}
	e.run(chromedp.KeyEvent("\u001b")) // Escape stops
	e.waitIdle()
	e.waitVisible(".msg.assistant .msg-note.stopped")
	partial := eval[string](e, `document.querySelector(".msg.assistant .md").textContent`)
	if !strings.HasPrefix(partial, "I was just getting started") {
		t.Errorf("kept text = %q", partial)
	}
	if !eval[bool](e, `!document.getElementById("send").hidden && document.getElementById("stop").hidden`) {
		t.Error("the send button is not back after stopping")
	}
	// The server kept the partial reply.
	e.run(chromedp.Reload())
	e.waitJS("the stored partial reply", `document.querySelector(".msg.assistant .md")?.textContent.includes("getting started")`)
	e.waitVisible(".msg.assistant .msg-note.stopped")
	// And the session takes a new turn at once: the stop button works
	// through the button too.
	e.fake.Enqueue(at.Text("More about pacing, slowly", 2).Paced(0, 40*time.Millisecond).StallAfter(6))
	e.send("Go on")
	e.waitJS("the second partial", `document.querySelectorAll(".msg.assistant").length === 2 && document.querySelectorAll(".msg.assistant")[1].textContent.includes("Mo")`)
	e.run(chromedp.Click(chromedp.CSS("#stop")))
	e.waitIdle()
}

func TestErrorBanners(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.signIn()
	t.Run("TurnInProgress", func(t *testing.T) {
		e := e.sub(t)
		e.faults.failNextWith("POST", "/v1/chat/stream", 409, `{"error":{"code":"turn_in_progress","message":"a turn is already running"}}`, "")
		e.send("Hello")
		e.waitVisible(`.banner[data-type=turn_in_progress]`)
		e.waitIdle()
		e.waitVisible(".msg.user.failed")
		if got := eval[string](e, `document.getElementById("input").value`); got != "Hello" {
			t.Errorf("composer = %q, want the unsent text back", got)
		}
	})
	t.Run("RateLimited", func(t *testing.T) {
		e := e.sub(t)
		e.faults.failNextWith("POST", "/v1/chat/stream", 429, `{"error":{"code":"rate_limit_exceeded","message":"too many messages"}}`, "42")
		e.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("input").value = ""`))
		e.send("Hello again")
		e.waitVisible(`.banner[data-type=rate_limit_exceeded]`)
		if got := eval[string](e, `document.querySelector(".banner").textContent`); !strings.Contains(got, "Try again in 4") {
			t.Errorf("banner = %q, want the retry time", got)
		}
	})
	t.Run("UpstreamBusyRetry", func(t *testing.T) {
		e := e.sub(t)
		e.faults.failNextWith("POST", "/v1/chat/stream", 503, `{"error":{"code":"rate_limit","message":"busy"}}`, "")
		e.fake.Enqueue(at.Text("Back now.", 0))
		e.sendThenRetry("Are you there?", "Back now.")
	})
	t.Run("UpstreamBusyMidStreamRetry", func(t *testing.T) {
		// The server stored the message, then the upstream refused: Retry
		// re-runs the stored turn and the message is not sent twice.
		e := e.sub(t)
		// Three 529s: the SDK's own two retries give up too.
		busy := at.Status(529, nil, "")
		e.fake.Enqueue(busy, busy, busy, at.Text("Here I am.", 0))
		e.sendThenRetry("Still there?", "Here I am.")
		reqs := e.fake.Requests()
		n := 0
		for _, m := range reqs[len(reqs)-1].Messages() {
			for _, b := range m.Blocks {
				if b.Text == "Still there?" {
					n++
				}
			}
		}
		if n != 1 {
			t.Fatalf("the retried request holds the message %d times", n)
		}
	})
	t.Run("BudgetExhausted", func(t *testing.T) {
		e := e.sub(t)
		e.faults.failNextWith("POST", "/v1/chat/stream", 402, `{"error":{"code":"budget_exhausted","message":"no budget left"}}`, "")
		e.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("input").value = ""`))
		e.send("One more")
		e.waitVisible(`.banner[data-type=budget_exhausted]`)
	})
}

// sendThenRetry sends text, waits for the upstream-busy banner, clicks its
// Retry and waits until the reply shows.
func (e *env) sendThenRetry(text, reply string) {
	e.t.Helper()
	e.run(chromedp.Evaluate[chromedp.Void](`document.getElementById("input").value = ""`))
	e.send(text)
	e.waitVisible(`.banner[data-type=rate_limit] .banner-retry`)
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("the retried reply", `document.getElementById("transcript").textContent.includes(`+strconv.Quote(reply)+`)`)
	e.waitIdle()
}

// TestSageInteractions answers a real pulse check, then a real options
// pause, through the UI against examples/sage: the answers must pass the
// server's result schemas and reach the model as tool results.
func TestSageInteractions(t *testing.T) {
	e := newEnv(t, 1280, 900, "--pack", filepath.Join(repoRoot(t), "examples", "sage"))
	e.fake.Enqueue(
		at.Blocks(at.TextBlock("Let's check in on your domains.", 0),
			at.ToolUse("toolu_pulse", "show_pulse_check", `{"context":"How did this week feel?","domains":["health","work"]}`)),
		at.Blocks(at.TextBlock("Health dipped. What would help most?", 0),
			at.ToolUse("toolu_opts", "show_options", `{"options":["Sleep earlier","Move daily"]}`)),
		at.Text("Sleep earlier it is.", 4),
	)
	e.signIn()
	e.send("Weekly check-in please")
	e.waitVisible(".interaction .rating-row")
	e.waitIdle()
	eval[chromedp.Void](e, `(() => {
		const scales = document.querySelectorAll(".interaction .rating");
		scales[0].querySelectorAll(".rate")[1].click();
		scales[1].querySelectorAll(".rate")[3].click();
		document.querySelector(".interaction form.pulse button[type=submit]").click();
	})()`)
	e.waitVisible(".interaction .pill")
	e.waitIdle()
	reqs := e.fake.Requests()
	if trs := reqs[len(reqs)-1].ToolResults(); len(trs) != 1 || !strings.Contains(trs[0].ResultText(), `{"domain":"health","rating":2}`) ||
		!strings.Contains(trs[0].ResultText(), `{"domain":"work","rating":4}`) {
		t.Fatalf("pulse answer sent to the model = %+v", trs)
	}
	if got := eval[string](e, `document.querySelector(".msg.user.answer .bubble").textContent`); got != "Rated health 2/5, work 4/5" {
		t.Errorf("answer bubble = %q", got)
	}
	eval[chromedp.Void](e, `document.querySelector(".interaction .pill").click()`)
	e.waitJS("the final reply", `document.querySelector("#transcript")?.textContent.includes("Sleep earlier it is.")`)
	e.waitIdle()
	reqs = e.fake.Requests()
	if trs := reqs[len(reqs)-1].ToolResults(); len(trs) != 1 || !strings.Contains(trs[0].ResultText(), "Sleep earlier") {
		t.Fatalf("options answer sent to the model = %+v", trs)
	}
	if n := e.faults.count("POST", "/v1/chat/stream"); n != 3 {
		t.Errorf("%d chat requests, want 3 (the message and two answers)", n)
	}
}

// TestReconnectMidReply: the browser's stream is cut mid-reply (the proxy
// drops it); the UI shows it is reconnecting, picks the turn up again after
// the last event it had, and ends with exactly the stored reply.
func TestReconnectMidReply(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "First the airport queue, then the stadium exit at ten, and finally the bars downtown until two."
	e.fake.Enqueue(at.Text(reply, 4).Paced(0, 40*time.Millisecond))
	e.signIn()
	eval[chromedp.Void](e, `(() => {
		window.__reconnecting = false;
		new MutationObserver(() => {
			if (document.querySelector(".msg-note.reconnecting")) window.__reconnecting = true;
		}).observe(document.body, { childList: true, subtree: true });
	})()`)
	e.send("Plan my night")
	e.waitJS("partial text", `document.querySelector(".msg.assistant .md")?.textContent.includes("airport")`)
	if n := e.faults.cutStreams(); n != 1 {
		t.Fatalf("cut %d streams", n)
	}
	e.waitIdle()
	got := eval[string](e, `document.querySelector(".msg.assistant .md").textContent`)
	if got != reply {
		t.Errorf("after the cut the UI shows %q, want %q", got, reply)
	}
	if !eval[bool](e, `window.__reconnecting`) {
		t.Error("the UI never showed it was reconnecting")
	}
	if n := e.faults.count("GET", "session stream"); n < 1 {
		t.Errorf("%d re-attachments", n)
	}
	if eval[bool](e, `!!document.querySelector(".banner:not([hidden])")?.textContent.trim()`) {
		t.Errorf("an error banner after a reconnect that worked: %s", eval[string](e, `document.querySelector(".banner").textContent`))
	}
	// The session stream follows the session turn after turn: once the
	// turn has ended the UI must close it, or every reconnect leaves one
	// open (holding one of the browser's six connections to the host, and
	// one of the user's --max-streams-per-user).
	e.faults.waitStreamsClosed(t)
	// The stored message is the same text.
	e.run(chromedp.Reload())
	e.waitJS("the stored reply", `document.querySelector(".msg.assistant .md")?.textContent.length > 0`)
	if stored := eval[string](e, `document.querySelector(".msg.assistant .md").textContent`); stored != reply {
		t.Errorf("stored %q", stored)
	}
}

// TestSendWhileHistoryLoads: a message typed while a conversation's
// history is still loading waits for it. Sent at once, the history would
// arrive afterwards and be drawn over the reply being written, which then
// streamed into nothing on screen.
func TestSendWhileHistoryLoads(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("One.", 0), at.Text("Two.", 0))
	e.signIn()
	e.send("First")
	e.waitJS("the first reply", `document.querySelector(".msg.assistant .md")?.textContent === "One."`)
	e.waitIdle()
	id := strings.TrimPrefix(eval[string](e, `location.hash`), "#/")
	release := e.faults.holdNext("GET", "/v1/sessions/"+id+"/messages")
	defer release()
	e.run(chromedp.Reload())
	e.waitVisible("#transcript .loading")
	e.send("Second")
	if got := eval[string](e, `document.getElementById("input").value`); got != "Second" {
		t.Errorf("composer while the history loads = %q, want the message kept until it has loaded", got)
	}
	release()
	e.waitJS("the history", `document.querySelector(".msg.assistant .md")?.textContent === "One."`)
	if got := eval[string](e, `document.getElementById("input").value`); got == "Second" {
		e.run(chromedp.Click(chromedp.CSS("#send")))
	}
	e.waitJS("the second reply on screen", `[...document.querySelectorAll(".msg.assistant .md")].some((m) => m.textContent === "Two.")`)
	e.waitIdle()
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.user .bubble")].map((b) => b.textContent)`); strings.Join(got, "|") != "First|Second" {
		t.Errorf("user messages on screen = %v, want [First Second]", got)
	}
}

// TestSignOutForgets: signing out leaves nothing of the user in the page
// (a shared browser's next user must not see it, nor send it): not their
// conversations, notes, attached files, banner or the session in the URL.
func TestSignOutForgets(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Hello there.", 0))
	e.signIn()
	e.send("My private question")
	e.waitJS("the session in the list", `document.querySelectorAll("#session-list .session").length === 1 && location.hash.startsWith("#/sess_")`)
	e.waitIdle()
	e.openNotes()
	e.run(
		chromedp.Click(chromedp.CSS(".add-note")),
		chromedp.SendKeys(chromedp.CSS(`.note-form [name=title]`), "Private note"),
		chromedp.SendKeys(chromedp.CSS(`.note-form [name=content]`), "Something only I should see."),
		chromedp.Click(chromedp.CSS(`.note-form button[type=submit]`)),
	)
	e.waitJS("the note saved", `document.querySelector(".note-list .note:not(.pending)") !== null`)
	eval[chromedp.Void](e, dropJS+`("`+base64.StdEncoding.EncodeToString([]byte("my notes"))+`", "private.txt", "text/plain", 0)`)
	e.waitJS("the upload", `document.querySelector("#attach-tray li:not(.uploading):not(.failed)") !== null`)
	e.run(chromedp.SendKeys(chromedp.CSS("#input"), "a draft"))
	e.run(chromedp.Click(chromedp.CSS("#signout")))
	e.waitVisible("#signin-key")
	got := eval[map[string]any](e, `({
		hash: location.hash,
		sessions: document.querySelectorAll("#session-list li").length,
		title: document.getElementById("chat-title").textContent,
		notes: document.querySelectorAll("#notes .note").length,
		noteCount: document.getElementById("notes-count").hidden ? "" : document.getElementById("notes-count").textContent,
		tray: document.querySelectorAll("#attach-tray li").length,
		me: document.getElementById("me-name").textContent,
		banner: document.getElementById("banner-host").textContent,
		input: document.getElementById("input").value,
	})`)
	want := map[string]any{"hash": "", "sessions": 0.0, "title": "New conversation", "notes": 0.0, "noteCount": "", "tray": 0.0, "me": "", "banner": "", "input": ""}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("after sign-out %s = %v, want %v", k, got[k], w)
		}
	}
}

// TestShutdownNoticeResumes: the server the browser streams from goes
// down mid-reply and ends the stream with a retryable server_shutdown
// error carrying the last event id ("reconnect with Last-Event-ID"). The
// turn goes on (on another replica, or in the log); the UI picks it up
// again after that id, as it does for a dropped connection, and shows
// the whole reply, not an error.
func TestShutdownNoticeResumes(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "Start with the airport at six, then the stadium, then downtown."
	e.fake.Enqueue(at.Text(reply, 4).Paced(0, 30*time.Millisecond))
	e.signIn()
	e.faults.shutdownNext("POST", "/v1/chat/stream", 6)
	e.send("Plan my shift")
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q after a shutdown notice, want the turn picked up again", got)
	}
	if got := eval[string](e, `document.querySelector(".msg.assistant .md")?.textContent ?? ""`); got != reply {
		t.Errorf("reply on screen = %q, want %q", got, reply)
	}
	if n := e.faults.count("GET", "session stream"); n < 1 {
		t.Errorf("%d resumes, want the stream picked up again", n)
	}
}

// TestRetryAfterLostStreamFollows: the stream is cut mid-reply and
// picking it up again fails (the server answers 503), so the UI gives
// up with a Retry. The turn went on on the server: Retry follows it
// again from the last event seen, and the message is not sent a second
// time (which would store it twice and have the coach answer it twice).
func TestRetryAfterLostStreamFollows(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "First the airport queue, then the stadium exit at ten, and finally the bars downtown until two."
	e.fake.Enqueue(at.Text(reply, 4).Paced(0, 30*time.Millisecond))
	e.signIn()
	e.send("Plan my night")
	e.waitJS("partial text", `document.querySelector(".msg.assistant .md")?.textContent.includes("airport")`)
	e.faults.failNext("GET", "/v1/sessions/", 503)
	if n := e.faults.cutStreams(); n != 1 {
		t.Fatalf("cut %d streams", n)
	}
	e.waitVisible(".banner .banner-retry")
	e.waitIdle()
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("the end of the reply", `document.getElementById("transcript").textContent.includes("until two.")`)
	e.waitIdle()
	if n := e.faults.count("POST", "/v1/chat/stream"); n != 1 {
		t.Errorf("%d chat requests, want 1: Retry sent the message again", n)
	}
	// One reply, written on where it was cut: not its second half in a
	// reply of its own, starting mid-sentence.
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.assistant")].map((m) => m.textContent)`); len(got) != 1 || got[0] != reply {
		t.Errorf("replies on screen = %q, want one: %q", got, reply)
	}
	if n := len(e.fake.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want once", n)
	}
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q after the retry", got)
	}
}
