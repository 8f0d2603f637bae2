package e2e

import (
	"strings"
	"testing"

	at "github.com/coachd/coachd/anthropic/anthropictest"
)

// TestBudgetTooSmallForTurn: a turn is refused (402 budget_exhausted)
// when its estimate does not fit what is left of the budget, however much
// is left. The banner said "You have used all the tokens in your budget"
// while the header showed none used: it must say what is left and what
// the reply needs, as the server does.
func TestBudgetTooSmallForTurn(t *testing.T) {
	e := newEnv(t, 1280, 800, "--default-budget", "1500")
	e.fake.Enqueue(at.Text("Never sent.", 0))
	e.signIn()
	e.send("Hello")
	e.waitVisible(`.banner[data-type=budget_exhausted]`)
	e.waitIdle()
	got := eval[string](e, `document.querySelector(".banner").textContent`)
	if strings.Contains(got, "used all the tokens") || !strings.Contains(got, "1,500") {
		t.Errorf("banner = %q, want it to say 1,500 tokens are left and the reply needs more", got)
	}
}
