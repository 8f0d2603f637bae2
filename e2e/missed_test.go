package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// apiDo sends a request to the API as the demo user and wants status.
func (e *env) apiDo(method, path, body string, header map[string]string, status int) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	if res.StatusCode != status {
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		e.t.Fatalf("%s %s: %s %s", method, path, res.Status, b)
	}
	return res
}

// oneSession wants the user to hold one conversation, with the page on
// it, and returns its id.
func (e *env) oneSession() string {
	e.t.Helper()
	res := e.apiDo("GET", "/v1/sessions", "", nil, http.StatusOK)
	var list struct{ Sessions []struct{ ID string } }
	err := json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if err != nil || len(list.Sessions) != 1 {
		e.t.Fatalf("sessions = %+v, %v; want one", list, err)
	}
	if got, want := eval[string](e, `location.hash`), "#/"+list.Sessions[0].ID; got != want {
		e.t.Errorf("page at %q, want the conversation %q", got, want)
	}
	return list.Sessions[0].ID
}

// TestEventsMissedReloads: the stream of a reply is lost, and by the time
// the user presses Retry another device has had 20 more turns, so the
// event log no longer holds the reply's rest. The server says so with an
// events_missed event; the page ignored it, drew the next logged turn's
// text into the half-written reply and stopped there. It now draws the
// conversation again from the store: the reply whole, and every turn
// after it.
func TestEventsMissedReloads(t *testing.T) {
	e := newEnv(t, 1280, 800, "--rate-limit", "off")
	const later = 20 // the event log keeps a session's last 20 turns
	e.fake.Enqueue(at.Text(nightPlan, 4).Paced(0, 40*time.Millisecond))
	for i := 1; i <= later; i++ {
		e.fake.Enqueue(at.Text(fmt.Sprintf("Reply %d.", i), 0))
	}
	e.signIn()
	e.send("Plan my night")
	e.waitJS("the reply under way", `document.getElementById("transcript").textContent.includes("airport")`)
	e.faults.failNext("GET", "/v1/sessions/", 503)
	if n := e.faults.cutStreams(); n != 1 {
		t.Fatalf("cut %d streams", n)
	}
	e.waitVisible(".banner .banner-retry")
	e.waitIdle()
	id := strings.TrimPrefix(eval[string](e, `location.hash`), "#/")

	// The reply ends on the server; then the other device's turns.
	res := e.apiDo("GET", "/v1/sessions/"+id+"/stream?protocol=coachd", "", map[string]string{"Last-Event-ID": "1:0"}, http.StatusOK)
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() && sc.Text() != "event: message_end" {
	}
	res.Body.Close()
	for i := 1; i <= later; i++ {
		res := e.apiDo("POST", "/v1/chat/stream?protocol=coachd", fmt.Sprintf(`{"session_id":%q,"message":"Elsewhere %d"}`, id, i), nil, http.StatusOK)
		b, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || !strings.Contains(string(b), "event: message_end") {
			t.Fatalf("turn %d: the reply's stream ended before its end (%v): %q", i, err, b)
		}
	}

	e.run(chromedp.Click(chromedp.CSS(".banner-retry")))
	e.waitJS("every turn drawn", fmt.Sprintf(`document.getElementById("transcript").textContent.includes("Reply %d.")`, later))
	e.waitIdle()
	if got := eval[string](e, `document.querySelector(".msg.assistant .md")?.textContent ?? ""`); got != nightPlan {
		t.Errorf("the lost reply reads %q, want it whole: %q", got, nightPlan)
	}
	if n := eval[int](e, `document.querySelectorAll(".msg.assistant").length`); n != later+1 {
		t.Errorf("%d replies drawn, want %d", n, later+1)
	}
	if got := eval[string](e, `document.getElementById("banner-host").textContent`); got != "" {
		t.Errorf("banner %q, want none", got)
	}
}
