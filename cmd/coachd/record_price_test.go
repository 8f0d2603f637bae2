package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
)

// TestRecordPricedInUnit: an external loop's record (seed 000's
// tokens_used, or the Messages API's usage) is charged in the budget's
// unit at the agent's model's prices, as coachd's own rounds are, not as
// if a token were a micro-dollar.
func TestRecordPricedInUnit(t *testing.T) {
	fake := anthropictest.NewServer()
	defer fake.Close()
	for _, unit := range []coachd.BudgetUnit{coachd.UnitMicroUSD, coachd.UnitWeighted, coachd.UnitTokens} {
		t.Run(string(unit), func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "c.db")
			p := MustStart(t, []string{"ANTHROPIC_API_KEY=test", "ANTHROPIC_BASE_URL=" + fake.URL()},
				"--db", db, "--demo", "--budget-unit", string(unit))
			defer p.kill()
			usage := coachd.Usage{InputTokens: 1200, OutputTokens: 300, CacheReadInputTokens: 8000}
			cases := []struct {
				name, extra string
				want        func(model string) int64
			}{
				// Seed 000 sends input plus output tokens as one number:
				// each is priced as an uncached input token.
				{"tokens_used", ``, func(m string) int64 { return unit.Charge(m, coachd.Usage{InputTokens: 1500}) }},
				{"usage", fmt.Sprintf(`,"usage":{"input_tokens":%d,"output_tokens":%d,"cache_read_input_tokens":%d}`,
					usage.InputTokens, usage.OutputTokens, usage.CacheReadInputTokens),
					func(m string) int64 { return unit.Charge(m, usage) }},
			}
			for _, c := range cases {
				var pf struct {
					SessionID     string `json:"session_id"`
					ReservationID string `json:"reservation_id"`
					Model         string `json:"model"`
				}
				if code := call(t, "POST", p.url+"/v1/chat/preflight", p.key, `{"message":"where to tonight?"}`, nil, &pf); code != 200 {
					t.Fatalf("preflight: %d", code)
				}
				var rec struct {
					TokensCharged int64 `json:"tokens_charged"`
				}
				body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":1500%s,
					"messages":[{"role":"user","content_blocks":[{"type":"text","text":"where to tonight?"}]},
					{"role":"assistant","content_blocks":[{"type":"text","text":"The airport."}]}]}`, pf.SessionID, pf.ReservationID, c.extra)
				if code := call(t, "POST", p.url+"/v1/chat/record", p.key, body, nil, &rec); code != 200 {
					t.Fatalf("%s: record: %d", c.name, code)
				}
				if want := c.want(pf.Model); rec.TokensCharged != want {
					t.Errorf("%s: charged %d %s, want %d (model %q)", c.name, rec.TokensCharged, unit, want, pf.Model)
				}
			}
			bad := `{"session_id":"sess_x","reservation_id":"res_x","usage":{"input_tokens":-1}}`
			if code := call(t, "POST", p.url+"/v1/chat/record", p.key, bad, nil, nil); code != 400 {
				t.Errorf("negative usage: %d, want 400", code)
			}
			p.kill()
			var out, errb bytes.Buffer
			if err := run(context.Background(), []string{"coachd", "doctor", "--db", db}, getenvFrom(nil), &out, &errb); err != nil {
				t.Fatalf("doctor: %v\n%s", err, out.String())
			}
		})
	}
}
