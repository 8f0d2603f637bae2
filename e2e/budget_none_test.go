package e2e

import (
	"strings"
	"testing"
)

// TestNoBudgetBanner: a user with no budget (token_budget 0) had every
// message refused under a banner saying they had used all the tokens of
// their budget for this period and could come back when it resets: it
// never resets, there is none. The banner says the account has no
// budget, as the server's refusal does.
func TestNoBudgetBanner(t *testing.T) {
	e := newEnv(t, 1280, 800, "--default-budget", "0")
	e.signIn()
	e.send("Hello")
	e.waitVisible(`.banner[data-type=budget_exhausted]`)
	e.waitIdle()
	got := eval[string](e, `document.querySelector(".banner").textContent`)
	if strings.Contains(got, "resets") || strings.Contains(got, "this period") || !strings.Contains(got, "no budget") {
		t.Errorf("banner = %q, want it to say the account has no budget, not that one resets", got)
	}
}
