package server_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/server"
)

// TestMeNewPeriod: GET /v1/me after the budget period moved on (no turn
// since) shows the new period's usage in the user's tokens_used, which
// the browser UI's header draws, as in its budget: not the ended
// period's total that the user row keeps until the next turn rolls it.
func TestMeNewPeriod(t *testing.T) {
	e := MustEnv(t, filepath.Join(t.TempDir(), "coachd.db"))
	e.db.SetBudgetConfig(coachd.BudgetConfig{Period: coachd.PeriodMonthly})
	key := server.NewAPIKey()
	// Used in a period long over (the row's period_start is the epoch).
	u := &coachd.User{Name: "carol", TokenBudget: 1000, TokensUsed: 900}
	if err := e.db.CreateUser(context.Background(), u, server.HashAPIKey(key)); err != nil {
		t.Fatal(err)
	}
	r := e.do(request{method: "GET", path: "/v1/me", key: key})
	if r.status != 200 {
		t.Fatalf("me %d %s", r.status, r.body)
	}
	var me struct {
		TokensUsed int64 `json:"tokens_used"`
		Budget     struct {
			TokensUsed int64 `json:"tokens_used"`
			Remaining  int64 `json:"remaining"`
		} `json:"budget"`
	}
	if err := json.Unmarshal(r.body, &me); err != nil {
		t.Fatal(err)
	}
	if me.Budget.TokensUsed != 0 || me.Budget.Remaining != 1000 {
		t.Fatalf("budget %+v, want the new period's: 0 used, 1000 remaining", me.Budget)
	}
	if me.TokensUsed != me.Budget.TokensUsed {
		t.Fatalf("tokens_used %d, budget.tokens_used %d: the header shows the ended period's usage", me.TokensUsed, me.Budget.TokensUsed)
	}
}
