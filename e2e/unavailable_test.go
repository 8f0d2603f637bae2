package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestUnavailableNoticeResumes: the database goes away mid-reply, so the
// stream's follower cannot read the turn's event log and ends the stream
// with a retryable unavailable error carrying the last event id
// ("reconnect with Last-Event-ID"). The turn goes on on the server. The
// page showed "Something went wrong" with that technical text, and its
// Retry sent the message a second time; it now picks the turn up again
// after that id, as it does for a server_shutdown notice, and shows the
// whole reply, sent once.
func TestUnavailableNoticeResumes(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "Start with the airport at six, then the stadium, then downtown."
	e.fake.Enqueue(at.Text(reply, 4).Paced(0, 30*time.Millisecond))
	e.signIn()
	e.faults.unavailableNext("POST", "/v1/chat/stream", 6)
	e.send("Plan my shift")
	e.waitJS("the end of the reply, or a banner", `document.getElementById("transcript").textContent.includes("downtown.") || document.getElementById("banner-host").textContent !== ""`)
	e.waitIdle()
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q after an unavailable notice, want the turn picked up again", got)
	}
	if got := eval[string](e, `document.querySelector(".msg.assistant .md")?.textContent ?? ""`); got != reply {
		t.Errorf("reply on screen = %q, want %q", got, reply)
	}
	if n := e.faults.count("GET", "session stream"); n < 1 {
		t.Errorf("%d resumes, want the stream picked up again", n)
	}
	if n := e.faults.count("POST", "/v1/chat/stream"); n != 1 {
		t.Errorf("%d chat requests, want 1", n)
	}
}

// TestUnavailableResumeRefused: the database is still away when the page
// picks the turn up again, and the session stream answers 503
// unavailable. The banner said "Something went wrong" over the server's
// text for operators; it now says the coach is briefly unavailable, and
// its Retry follows the turn on instead of sending the message again.
func TestUnavailableResumeRefused(t *testing.T) {
	e := newEnv(t, 1280, 800)
	reply := "Start with the airport at six, then the stadium, then downtown."
	e.fake.Enqueue(at.Text(reply, 4).Paced(0, 30*time.Millisecond))
	e.signIn()
	e.faults.unavailableNext("POST", "/v1/chat/stream", 6)
	e.faults.failNextWith("GET", "/v1/sessions/", 503, `{"error":{"code":"unavailable","message":"the database is unavailable for now"}}`, "1")
	e.send("Plan my shift")
	e.waitVisible(".banner .banner-retry")
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".banner-title").textContent + " " + document.querySelector(".banner-text").textContent`); strings.Contains(got, "database") || !strings.Contains(got, "unavailable") {
		t.Errorf("banner = %q, want it to say the coach is briefly unavailable, in the user's words", got)
	}
	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("the end of the reply", `document.getElementById("transcript").textContent.includes("downtown.")`)
	e.waitIdle()
	if n := e.faults.count("POST", "/v1/chat/stream"); n != 1 {
		t.Errorf("%d chat requests, want 1: Retry sent the message again", n)
	}
	if got := eval[[]string](e, `[...document.querySelectorAll(".msg.assistant")].map((m) => m.textContent)`); len(got) != 1 || got[0] != reply {
		t.Errorf("replies on screen = %q, want one: %q", got, reply)
	}
}
