package coachd

import (
	"maps"
	"math"
	"strconv"
	"strings"
)

// Price is what a model costs, in US dollars per million tokens, by kind
// of token. Claude bills a 5-minute cache write at 1.25× the input price,
// a 1-hour write at 2× and a cache read at 0.1×.
type Price struct {
	Input        float64 `json:"input"`
	Output       float64 `json:"output"`
	CacheWrite5m float64 `json:"cache_write_5m"`
	CacheWrite1h float64 `json:"cache_write_1h"`
	CacheRead    float64 `json:"cache_read"`
}

// price builds a Price from the input and output prices with Claude's
// cache multipliers.
func price(in, out float64) Price {
	return Price{Input: in, Output: out, CacheWrite5m: 1.25 * in, CacheWrite1h: 2 * in, CacheRead: in / 10}
}

// prices is the one pricing table, by model id prefix (the longest
// matching prefix wins). Anthropic's list prices per million tokens;
// models newer than the table are priced as their family's current model.
var prices = map[string]Price{
	"claude-opus-4-5": price(5, 25), "claude-opus-4-6": price(5, 25), "claude-opus-4-7": price(5, 25),
	"claude-opus-4-8": price(5, 25), "claude-opus-4-1": price(15, 75), "claude-opus-4-0": price(15, 75),
	"claude-opus-4-2": price(15, 75), "claude-opus-4@": price(15, 75), "claude-opus": price(5, 25),
	"claude-sonnet":    price(3, 15),
	"claude-haiku-4-5": price(1, 5), "claude-haiku": price(1, 5),
	"claude-3-5-haiku": price(0.8, 4), "claude-3-haiku": price(0.25, 1.25),
	"claude-fable": price(3, 15), "claude-mythos": price(5, 25),
}

// DefaultPrice prices a model the table does not know: Sonnet's prices.
var DefaultPrice = price(3, 15)

// PriceOf returns model's price: the table's entry with the longest
// prefix of the id, DefaultPrice when none matches. A Bedrock id
// ("us.anthropic.claude-opus-4-1-…-v1:0", or an inference profile's ARN
// ending in one) is priced as the Claude model it names: Claude costs
// the same there (Vertex's "claude-opus-4-1@…" needs nothing).
func PriceOf(model string) Price {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "anthropic.claude-"); i >= 0 {
		m = m[i+len("anthropic."):]
	}
	best, p := -1, DefaultPrice
	for prefix, pr := range prices {
		if strings.HasPrefix(m, prefix) && len(prefix) > best {
			best, p = len(prefix), pr
		}
	}
	return p
}

// Budget units: what a budget (users.token_budget), the ledger and a
// reservation count.
const (
	// UnitTokens counts every token once, whatever its kind: coachd's
	// original budgets, and the default.
	UnitTokens BudgetUnit = "tokens"
	// UnitWeighted counts tokens-equivalent: tokens weighted by what Claude
	// bills for them relative to an input token of the same model (a cache
	// read 0.1, a 5-minute cache write 1.25, a 1-hour write 2, an output
	// token Output/Input: 5 for every current model). A budget of N is N
	// uncached input tokens' worth.
	UnitWeighted BudgetUnit = "weighted"
	// UnitMicroUSD counts money, in millionths of a US dollar at the
	// table's list prices (budget_usd 2.50 is 2,500,000).
	UnitMicroUSD BudgetUnit = "usd"
)

// BudgetUnit is what budgets count; see UnitTokens, UnitWeighted and
// UnitMicroUSD.
type BudgetUnit string

// ParseBudgetUnit parses "tokens", "weighted" or "usd" ("" is tokens).
func ParseBudgetUnit(s string) (BudgetUnit, error) {
	switch u := BudgetUnit(s); u {
	case "":
		return UnitTokens, nil
	case UnitTokens, UnitWeighted, UnitMicroUSD:
		return u, nil
	}
	return "", Errorf(EINVALID, "budget unit %q: want tokens, weighted or usd", s)
}

// WebSearchUSD is what Claude bills a server web search, in US dollars
// ($10 per 1,000 searches, whatever the model).
const WebSearchUSD = 0.01

// Cost is the money u costs on model, in US dollars: cache writes at
// their lifetime's price (1 hour for CacheCreation1hInputTokens of them,
// 5 minutes for the rest), and web searches at WebSearchUSD each.
func Cost(model string, u Usage) float64 {
	p := PriceOf(model)
	w1h := min(u.CacheCreation1hInputTokens, u.CacheCreationInputTokens)
	return (float64(u.InputTokens)*p.Input+float64(u.OutputTokens)*p.Output+
		float64(u.CacheCreationInputTokens-w1h)*p.CacheWrite5m+float64(w1h)*p.CacheWrite1h+
		float64(u.CacheReadInputTokens)*p.CacheRead)/1e6 + float64(u.WebSearchRequests)*WebSearchUSD
}

// Weighted is u in tokens-equivalent of model (see UnitWeighted),
// unrounded: what Cost bills, in uncached input tokens of model.
func Weighted(model string, u Usage) float64 {
	p := PriceOf(model)
	if p.Input <= 0 {
		return float64(u.Total())
	}
	return Cost(model, u) * 1e6 / p.Input
}

// Charge is what u costs on model in unit, rounded up to a whole unit so
// that nothing used is ever free.
func (unit BudgetUnit) Charge(model string, u Usage) int64 {
	var v float64
	switch unit {
	case UnitWeighted:
		v = Weighted(model, u)
	case UnitMicroUSD:
		v = Cost(model, u) * 1e6
	default:
		return min(u.Total(), MaxTurnTokens)
	}
	return int64(min(math.Ceil(v-1e-9), float64(unit.MaxTurn())))
}

// MaxTurn bounds a turn's charge in unit: MaxTurnTokens tokens of the
// dearest kind the price table knows (Opus 4.1's output, $75 a million:
// 7.5e9 µ$, or 5e8 tokens-equivalent). A real turn stays under it; a
// forged record is charged no more.
func (unit BudgetUnit) MaxTurn() int64 {
	if unit != UnitWeighted && unit != UnitMicroUSD {
		return MaxTurnTokens
	}
	dearest := func(p Price) float64 { // a token of p, in unit
		d := max(p.Output, p.CacheWrite1h) // $ a million tokens is µ$ a token
		if unit == UnitWeighted {
			d /= p.Input
		}
		return d
	}
	most := dearest(DefaultPrice)
	for p := range maps.Values(prices) {
		most = max(most, dearest(p))
	}
	return int64(math.Ceil(float64(MaxTurnTokens) * most))
}

// USD converts an amount in unit to dollars, when the unit is money.
func (unit BudgetUnit) USD(amount int64) (float64, bool) {
	if unit != UnitMicroUSD {
		return 0, false
	}
	return float64(amount) / 1e6, true
}

// USDText writes an amount of money (micro-dollars) as dollars, as the
// browser UI does: to the cent, or to a hundredth of a cent below one.
func USDText(micro int64) string {
	if micro > 0 && micro < 10_000 {
		s := strings.TrimRight(strconv.FormatFloat(float64(micro)/1e6, 'f', 4, 64), "0")
		return "$" + s
	}
	return "$" + strconv.FormatFloat(float64(micro)/1e6, 'f', 2, 64)
}
