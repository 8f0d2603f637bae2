package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestBudgetUnitWeighted: `serve --budget-unit weighted` charges turns in
// tokens-equivalent; /v1/me and the usage events show the billed amount
// and the raw tokens behind it, and coachd doctor still balances.
func TestBudgetUnitWeighted(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	db := filepath.Join(t.TempDir(), "c.db")
	p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
		"--db", db, "--demo", "--budget-unit", "weighted")
	session := ""
	for i := range 2 {
		fake.Enqueue(anthropictest.Text(fmt.Sprintf("Answer %d: start at the airport and keep the app on.", i), 4))
		body := fmt.Sprintf(`{"message":"where should I drive now? %d"}`, i)
		if session != "" {
			body = fmt.Sprintf(`{"message":"and then? %d","session_id":%q}`, i, session)
		}
		req, _ := http.NewRequest("POST", p.url+"/v1/chat/stream", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+p.key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(raw, []byte(`"budget_unit":"weighted"`)) || !bytes.Contains(raw, []byte(`"billed":`)) {
			t.Fatalf("turn %d: usage events lack the billed amount:\n%s", i, raw)
		}
		if i := bytes.Index(raw, []byte(`"session_id":"`)); i >= 0 && session == "" {
			rest := raw[i+len(`"session_id":"`):]
			session = string(rest[:bytes.IndexByte(rest, '"')])
		}
	}
	var me struct {
		Budget struct {
			TokensUsed    int64  `json:"tokens_used"`
			RawTokensUsed int64  `json:"raw_tokens_used"`
			Unit          string `json:"unit"`
		} `json:"budget"`
	}
	call(t, "GET", p.url+"/v1/me", p.key, "", nil, &me)
	b := me.Budget
	if b.Unit != "weighted" || b.TokensUsed <= 0 || b.RawTokensUsed <= 0 || b.TokensUsed == b.RawTokensUsed {
		t.Fatalf("/v1/me budget %+v, want weighted usage next to the raw tokens", b)
	}
	p.kill()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"coachd", "doctor", "--db", db}, getenvFrom(nil), &out, &errb); err != nil {
		t.Fatalf("doctor: %v\n%s", err, out.String())
	}
}
