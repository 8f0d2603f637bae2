package e2e

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// loseAnswer runs act, whose chat request coachd takes and answers, and
// cuts that answer (and the browser's own resends of the request) on the
// network before any of it reaches the page, until the page offers
// Retry.
func (e *env) loseAnswer(act func()) {
	e.t.Helper()
	answered, stop := e.faults.cutAnswers("POST", "/v1/chat/stream")
	defer stop()
	act()
	select {
	case <-answered:
	case <-e.ctx.Done():
		e.t.Fatal("coachd never answered the chat request")
	}
	e.waitVisible(".banner-retry")
	e.waitIdle()
}

// TestRetryLostAnswer: the answer to a message is lost on the network
// before any of it reached the page (coachd took the message and ran its
// turn), and the user presses Retry. The page sent no Idempotency-Key,
// so the server took Retry for a new message: it was stored twice (in a
// second conversation, for a first message) and the coach answered twice.
// The page now sends one key per message, kept across its Retry: the
// server answers Retry with the first turn's events. The same words sent
// again by the user are a new message all the same.
func TestRetryLostAnswer(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.signIn()

	// lostThenRetried sends text with its answer cut, presses Retry and
	// waits for reply.
	lostThenRetried := func(text, reply string) {
		t.Helper()
		e.fake.Enqueue(at.Text(reply, 0))
		e.loseAnswer(func() { e.send(text) })
		e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
		e.waitJS("the reply", `document.getElementById("transcript").textContent.includes(`+strconv.Quote(reply)+`)`)
		e.waitIdle()
	}
	// check wants the page and the server to hold users messages from
	// the user and the coach to have been asked calls times, reply shown
	// once.
	check := func(users, calls int, reply string) {
		t.Helper()
		if got := eval[int](e, `document.getElementById("transcript").textContent.split(`+strconv.Quote(reply)+`).length - 1`); got != 1 {
			t.Errorf("%q on screen %d times, want once", reply, got)
		}
		if got := eval[int](e, `document.querySelectorAll(".msg.user").length`); got != users {
			t.Errorf("%d user messages on screen, want %d", got, users)
		}
		if got := eval[string](e, `document.getElementById("transcript").textContent`); strings.Contains(got, "Not sent") {
			t.Errorf("transcript %q: a message Retry sent is marked not sent", got)
		}
		if got := eval[string](e, `document.getElementById("input").value`); got != "" {
			t.Errorf("composer %q after Retry sent it, want it empty", got)
		}
		if got := len(e.fake.Requests()); got != calls {
			t.Errorf("the model was called %d times, want %d", got, calls)
		}
		res := e.apiDo("GET", "/v1/sessions/"+e.oneSession()+"/messages", "", nil, http.StatusOK)
		var page struct{ Messages []struct{ Role string } }
		err := json.NewDecoder(res.Body).Decode(&page)
		res.Body.Close()
		n := 0
		for _, m := range page.Messages {
			if m.Role == "user" {
				n++
			}
		}
		if err != nil || n != users {
			t.Errorf("stored user messages = %d (%+v, %v), want %d", n, page.Messages, err, users)
		}
		if t.Failed() {
			t.FailNow()
		}
	}

	// A new conversation's first message.
	lostThenRetried("ok", "First reply.")
	check(1, 1, "First reply.")

	// The same words again, from the composer: a new message.
	e.fake.Enqueue(at.Text("Second reply.", 0))
	e.send("ok")
	e.waitJS("the second reply", `document.getElementById("transcript").textContent.includes("Second reply.")`)
	e.waitIdle()
	check(2, 2, "Second reply.")

	// And once more, its answer lost and retried, in the conversation.
	lostThenRetried("ok", "Third reply.")
	check(3, 3, "Third reply.")
}

// TestRetryLostAnswerToQuestion: the answer to a question is lost on
// the network the same way. Retry sent it again as a new request, which
// the server refused (the question was answered already, by the request
// whose answer was lost): the page drew the conversation again with the
// question closed. With the answer's key kept across Retry, the server
// answers it with the first turn's events: the reply, once.
func TestRetryLostAnswerToQuestion(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.askTime()
	e.loseAnswer(func() { e.run(chromedp.Click(chromedp.CSS(`.interaction .pill[data-value="Lunch"]`))) })
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Morning it is.")`)
	e.waitIdle()
	if got := eval[int](e, `document.getElementById("transcript").textContent.split("Morning it is.").length - 1`); got != 1 {
		t.Errorf("the reply on screen %d times, want once", got)
	}
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.user.answer .bubble")].map(b => b.textContent)`); len(got) != 1 || got[0] != "Lunch" {
		t.Errorf("answers shown %v, want [Lunch]", got)
	}
	if got := eval[string](e, `document.querySelector(".pill.chosen")?.textContent || ""`); got != "Lunch" {
		t.Errorf("chosen option %q, want Lunch", got)
	}
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q after Retry, want none", got)
	}
	if got := len(e.fake.Requests()); got != 2 {
		t.Errorf("the model was called %d times, want 2 (the question, the reply)", got)
	}
}

// TestResendLostFromComposer: a message whose answer was lost is marked
// "Not sent" and put back in the composer, as a refused one is; sent
// again from there (Enter, not Retry), it went as a new message, and the
// server, which had taken the first, stored it twice and answered twice.
// What the page put back, sent unchanged, is that same message again.
func TestResendLostFromComposer(t *testing.T) {
	e := newEnv(t, 1280, 800)
	e.fake.Enqueue(at.Text("Once only.", 0))
	e.signIn()
	e.loseAnswer(func() { e.send("Plan my week") })
	if got := eval[string](e, `document.getElementById("input").value`); got != "Plan my week" {
		t.Fatalf("composer %q after the lost answer, want the message back", got)
	}
	e.run(chromedp.Focus(chromedp.CSS("#input")), pressEnter())
	e.waitJS("the reply", `document.getElementById("transcript").textContent.includes("Once only.")`)
	e.waitIdle()
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.user")].map((m) => m.textContent)`); len(got) != 1 || got[0] != "Plan my week" {
		t.Errorf("user messages on screen = %q, want the one sent, once", got)
	}
	if got := eval[int](e, `document.getElementById("transcript").textContent.split("Once only.").length - 1`); got != 1 {
		t.Errorf("the reply on screen %d times, want once", got)
	}
	if got := len(e.fake.Requests()); got != 1 {
		t.Errorf("the model was called %d times, want once", got)
	}
	e.oneSession()
}
