package e2e

import (
	"strings"
	"testing"
)

// TestBudgetUSDHeader: with --budget-unit usd a budget counts
// micro-dollars (token_budget 2500000 is $2.50), but the header said
// "0 / 2.5M" and "0 of 2,500,000 tokens used this period": two and a
// half million tokens the user never had. It says dollars, as GET
// /v1/me's budget_usd and used_usd do.
func TestBudgetUSDHeader(t *testing.T) {
	e := newEnv(t, 1280, 800, "--budget-unit", "usd", "--default-budget", "2500000")
	e.signIn()
	e.waitJS("the header", `document.getElementById("budget-text").textContent !== ""`)
	text := eval[string](e, `document.getElementById("budget-text").textContent`)
	title := eval[string](e, `document.getElementById("budget").title`)
	if text != "$0.00 / $2.50" || strings.Contains(title, "tokens") || !strings.Contains(title, "$2.50") {
		t.Errorf("header %q, title %q; want $0.00 / $2.50, in dollars", text, title)
	}
}

// TestBudgetUSDRefused: a turn refused for a usd budget had its banner
// say "needs about 14,000 tokens and only 1,500 are left": micro-dollars
// named tokens. It says dollars.
func TestBudgetUSDRefused(t *testing.T) {
	e := newEnv(t, 1280, 800, "--budget-unit", "usd", "--default-budget", "1500")
	e.signIn()
	e.send("Hello")
	e.waitVisible(`.banner[data-type=budget_exhausted]`)
	e.waitIdle()
	got := eval[string](e, `document.querySelector(".banner").textContent`)
	if strings.Contains(got, "tokens") || !strings.Contains(got, "$0.0015") {
		t.Errorf("banner = %q, want it to say $0.0015 is left, in dollars", got)
	}
}
