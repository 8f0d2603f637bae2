package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestBudgetDangerHeld: the header's colour said how much of the budget
// was used and left out what turns under way hold (an app's own loop's
// preflight here): with 98% of the budget held and the next message
// sure to be refused, it stayed green. Held counts toward the warning
// as toward what remains.
func TestBudgetDangerHeld(t *testing.T) {
	const admin = "admin-key-budget-danger"
	e := newEnv(t, 1280, 800, "--default-budget", "10000000", "--admin-key", admin)
	res := e.apiDo("POST", "/v1/chat/preflight", `{"message":"I drive mornings"}`, nil, http.StatusOK)
	var pre struct {
		Estimate int64 `json:"estimated_tokens"`
	}
	err := json.NewDecoder(res.Body).Decode(&pre)
	res.Body.Close()
	if err != nil || pre.Estimate <= 0 {
		t.Fatalf("preflight: estimate %d, %v", pre.Estimate, err)
	}
	res = e.apiDo("GET", "/v1/me", "", nil, http.StatusOK)
	var me struct {
		ID string `json:"id"`
	}
	err = json.NewDecoder(res.Body).Decode(&me)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	// The preflight holds 98% of the budget; nothing is used.
	req, _ := http.NewRequest("PATCH", e.url+"/v1/users/"+me.ID, strings.NewReader(fmt.Sprintf(`{"token_budget":%d}`, pre.Estimate*100/98)))
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	res, err = http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("set budget: %v %v", res, err)
	}
	res.Body.Close()

	e.signIn()
	e.waitJS("the header", `document.getElementById("budget").dataset.held !== undefined`)
	held := eval[string](e, `document.getElementById("budget").dataset.held`)
	level := eval[string](e, `document.getElementById("budget").dataset.level`)
	if held != fmt.Sprint(pre.Estimate) || level != "danger" {
		t.Errorf("header held %s, level %q; want %d held and the danger colour", held, level, pre.Estimate)
	}
}
