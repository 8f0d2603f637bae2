package coachd_test

import (
	"testing"

	"github.com/coachd/coachd"
)

func TestPricing(t *testing.T) {
	t.Run("Table", func(t *testing.T) {
		for model, want := range map[string]float64{
			"claude-sonnet-5-5": 3, "claude-opus-4-1-20250805": 15, "claude-opus-4-5-20251101": 5,
			"claude-haiku-4-5": 1, "claude-3-haiku-20240307": 0.25, "someone-elses-model": 3,
		} {
			if got := coachd.PriceOf(model).Input; got != want {
				t.Errorf("%s input %v, want %v", model, got, want)
			}
		}
		p := coachd.PriceOf("claude-sonnet-5-5")
		if p.CacheRead != 0.3 || p.CacheWrite5m != 3.75 || p.CacheWrite1h != 6 || p.Output != 15 {
			t.Errorf("sonnet %+v", p)
		}
	})
	t.Run("PlatformIDs", func(t *testing.T) {
		// Claude on Bedrock and Vertex (agent.Provider) is named the
		// platform's way and billed at the same list prices.
		for model, want := range map[string]float64{
			"anthropic.claude-opus-4-1-20250805-v1:0":                                                    15,
			"us.anthropic.claude-opus-4-1-20250805-v1:0":                                                 15,
			"eu.anthropic.claude-sonnet-4-5-20250929-v1:0":                                               3,
			"global.anthropic.claude-haiku-4-5-20251001-v1:0":                                            1,
			"apac.anthropic.claude-3-haiku-20240307-v1:0":                                                0.25,
			"us.anthropic.claude-opus-4-20250514-v1:0":                                                   15,
			"claude-opus-4@20250514":                                                                     15,
			"claude-opus-4-1@20250805":                                                                   15,
			"claude-haiku-4-5@20251001":                                                                  1,
			"arn:aws:bedrock:us-east-1:123:inference-profile/us.anthropic.claude-opus-4-5-20251101-v1:0": 5,
		} {
			if got := coachd.PriceOf(model).Input; got != want {
				t.Errorf("%s input %v, want %v", model, got, want)
			}
		}
	})
	t.Run("Charge", func(t *testing.T) {
		u := coachd.Usage{InputTokens: 100, OutputTokens: 10, CacheReadInputTokens: 1000, CacheCreationInputTokens: 40}
		for unit, want := range map[coachd.BudgetUnit]int64{
			coachd.UnitTokens:   1150,                // every token once, as before
			coachd.UnitWeighted: 100 + 50 + 100 + 50, // output ×5, read ×0.1, write ×1.25
			coachd.UnitMicroUSD: 900,                 // $3/M in, $15/M out: 300+150+300+150
		} {
			if got := unit.Charge("claude-sonnet-5-5", u); got != want {
				t.Errorf("%s: %d, want %d", unit, got, want)
			}
		}
		if got := coachd.UnitWeighted.Charge("claude-sonnet-5-5", coachd.Usage{CacheReadInputTokens: 1}); got != 1 {
			t.Errorf("a single cache read billed %d, want 1: nothing used is free", got)
		}
	})
	t.Run("ErrUnit", func(t *testing.T) {
		if _, err := coachd.ParseBudgetUnit("euros"); coachd.ErrorCode(err) != coachd.EINVALID {
			t.Errorf("err %v", err)
		}
		if u, err := coachd.ParseBudgetUnit(""); err != nil || u != coachd.UnitTokens {
			t.Errorf("default %q %v", u, err)
		}
	})
}
