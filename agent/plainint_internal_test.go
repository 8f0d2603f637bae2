package agent

import (
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strings"
	"testing"
)

// TestPlainIntegers: an integer written with a fraction or an exponent is
// handed to a tool as plain digits (JSON Schema's "integer" takes 50.0,
// encoding/json refuses it for a Go int); nothing else changes.
func TestPlainIntegers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"importance":50.0}`, `{"importance":50}`},
		{`{"a": 5e1, "b":5.00E+1,"c":-1.5e1, "d":[0.0,-0.0,0e9]}`, `{"a": 50, "b":50,"c":-15, "d":[0,0,0]}`},
		{`{"max":9223372036854775807.0,"min":-9.223372036854775808e18}`, `{"max":9223372036854775807,"min":-9223372036854775808}`},
		{`{"over":9223372036854775808.0,"big":1e19,"huge":1e999999999999999999999}`, `{"over":9223372036854775808.0,"big":1e19,"huge":1e999999999999999999999}`},
		{`{"half":50.5,"tiny":5e-1,"small":1e-999999999999999999}`, `{"half":50.5,"tiny":5e-1,"small":1e-999999999999999999}`},
		{`{"plain":50,"neg":-0,"s":"50.0","k\"50.0":"5e1\\"}`, `{"plain":50,"neg":-0,"s":"50.0","k\"50.0":"5e1\\"}`},
		{`{"z":1,"a":2.0}`, `{"z":1,"a":2}`}, // key order kept
		{`{"e":12.5e1,"f":1250e-1}`, `{"e":125,"f":125}`},
	} {
		if got := plainIntegers(json.RawMessage(tc.in)); string(got) != tc.want {
			t.Errorf("plainIntegers(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	in := json.RawMessage(`{"title":"x","importance":50}`)
	if got := plainIntegers(in); &got[0] != &in[0] {
		t.Error("an input without such numbers is copied; want it as is")
	}
}

// FuzzPlainIntegers checks plainIntegers against encoding/json: the
// rewritten input decodes (UseNumber) to the same tokens with the same
// values, each rewritten number now an int64, and no number left with a
// fraction or exponent that is an integer fitting an int64.
func FuzzPlainIntegers(f *testing.F) {
	for _, s := range []string{`{"importance":50.0}`, `[1e2,-0.0,5.5,"7.0"]`, `{"a":{"b":[9.2e18,1E+1]}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := plainIntegers(json.RawMessage(in)) // never panics, valid or not
		if !json.Valid([]byte(in)) {
			return // callers validate first
		}
		if !json.Valid(out) {
			t.Fatalf("%s → %s: not JSON", in, out)
		}
		a, b := tokens(t, in), tokens(t, string(out))
		if len(a) != len(b) {
			t.Fatalf("%s → %s: %d tokens, want %d", in, out, len(b), len(a))
		}
		for i := range a {
			x, isNum := a[i].(json.Number)
			y, _ := b[i].(json.Number)
			if !isNum || x == y {
				if a[i] != b[i] {
					t.Fatalf("%s → %s: token %d is %v, want %v", in, out, i, b[i], a[i])
				}
				if isNum && integral(x) {
					t.Fatalf("%s → %s: %s is an int64 left as it was", in, out, x)
				}
				continue
			}
			if !strings.ContainsAny(string(x), ".eE") {
				t.Fatalf("%s → %s: plain %s rewritten as %v", in, out, x, b[i])
			}
			if _, err := y.Int64(); err != nil {
				t.Fatalf("%s → %s: %s rewritten as %s, not an int64", in, out, x, y)
			}
			rx, ry := ratOf(string(x)), ratOf(string(y))
			if rx == nil || ry == nil || rx.Cmp(ry) != 0 {
				t.Fatalf("%s → %s: %s rewritten as %s, another value", in, out, x, y)
			}
		}
	})
}

// ratOf is a JSON number's exact value (nil if big.Rat cannot read it);
// a zero mantissa is zero whatever its exponent.
func ratOf(s string) *big.Rat {
	mant, _, _ := strings.Cut(strings.ToLower(s), "e")
	if strings.Trim(mant, "-0.") == "" {
		return new(big.Rat)
	}
	r, _ := new(big.Rat).SetString(s)
	return r
}

// tokens decodes s with UseNumber into its token stream.
func tokens(t *testing.T, s string) []json.Token {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var out []json.Token
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		out = append(out, tok)
	}
}

// integral says n, written with a fraction or an exponent, is an integer
// that fits an int64. Exponents past 4 digits go unchecked: big.Rat would
// build the power.
func integral(n json.Number) bool {
	s := string(n)
	if !strings.ContainsAny(s, ".eE") {
		return false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(strings.TrimLeft(s[i+1:], "+-0")) > 4 {
		return false
	}
	r, ok := new(big.Rat).SetString(s)
	return ok && r.IsInt() && r.Num().IsInt64()
}
