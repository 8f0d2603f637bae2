package e2e

import (
	"encoding/json"
	"net/http"
	"testing"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestBudgetRefusedHeader: a turn refused 402 budget_exhausted after the
// budget was spent elsewhere (another tab, an app's own loop) left the
// header as the page last read it, nothing used, beside a banner saying
// only a little was left: the page reads the user again after the
// refusal, and the header says what GET /v1/me says, without a reload.
func TestBudgetRefusedHeader(t *testing.T) {
	e := newEnv(t, 1280, 800, "--default-budget", "8000")
	e.fake.Enqueue(at.Text("Never sent.", 0))
	e.signIn()
	e.waitJS("the header", `document.getElementById("budget-text").textContent === "0 / 8.0k"`)

	// An app's own loop spends 5,000 of the 8,000.
	res := e.apiDo("POST", "/v1/chat/preflight", `{"message":"I drive mornings"}`, nil, http.StatusOK)
	var pre struct {
		Session     string `json:"session_id"`
		Reservation string `json:"reservation_id"`
	}
	err := json.NewDecoder(res.Body).Decode(&pre)
	res.Body.Close()
	if err != nil || pre.Reservation == "" {
		t.Fatalf("preflight: %+v, %v", pre, err)
	}
	e.apiDo("POST", "/v1/chat/record", `{"session_id":"`+pre.Session+`","reservation_id":"`+pre.Reservation+`","tokens_used":5000,"final":true,
		"messages":[{"role":"user","content_blocks":[{"type":"text","text":"I drive mornings"}]},{"role":"assistant","content_blocks":[{"type":"text","text":"Noted."}]}]}`, nil, http.StatusOK).Body.Close()

	e.send("Hello")
	e.waitVisible(`.banner[data-type=budget_exhausted]`)
	e.waitIdle()
	e.waitJS("the header after the refusal", `document.getElementById("budget-text").textContent === "5.0k / 8.0k"`)
}
