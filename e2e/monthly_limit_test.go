package e2e

import (
	"strings"
	"testing"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestMonthlyLimitBanner: a message refused 429 for the monthly message
// limit had its banner say "You have sent a lot of messages in a short
// time" and count down the days to the 1st in seconds ("Try again in
// 172800s."). It says the month's messages are used up and when more
// come, with no countdown.
func TestMonthlyLimitBanner(t *testing.T) {
	e := newEnv(t, 1280, 800, "--monthly-messages", "1")
	e.fake.Enqueue(at.Text("Mornings are best.", 3))
	e.signIn()
	e.send("When should I drive?")
	e.waitIdle()
	e.send("And on Sundays?")
	e.waitVisible(`.banner[data-type=rate_limit_exceeded]`)
	e.waitIdle()
	got := eval[string](e, `document.querySelector(".banner").textContent`)
	if strings.Contains(got, "short time") || strings.Contains(got, "Try again in") || !strings.Contains(got, "month") {
		t.Errorf("banner = %q, want the month's messages used up, no countdown", got)
	}
}
