package coachd_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/coachd/coachd"
)

// TestAppendJSONFloat: numbers come out as json.Marshal writes them,
// exponents included; NaN and the infinities are refused, as it refuses
// them, with nothing appended.
func TestAppendJSONFloat(t *testing.T) {
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -2.5, 0.0018, 1e-6, 9.99e-7, 1e-7, 1e-9, -1e-300,
		123456789.125, 1e20, 1e21, 1.5e22, -1e300, math.MaxFloat64, math.SmallestNonzeroFloat64} {
		asMarshal(t, f)
	}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, ok := coachd.AppendJSONFloat([]byte("x"), f); ok || string(got) != "x" {
			t.Errorf("%v: %q, %v; want nothing appended, false", f, got, ok)
		}
	}
}

// FuzzAppendJSONFloat: whatever the number, AppendJSONFloat writes what
// json.Marshal writes, or refuses what it refuses.
func FuzzAppendJSONFloat(f *testing.F) {
	for _, v := range []float64{0, 1e-7, 1e21, 0.1, -3.25e-12} {
		f.Add(v)
	}
	f.Fuzz(asMarshal)
}

func asMarshal(t *testing.T, f float64) {
	t.Helper()
	want, err := json.Marshal(f)
	got, ok := coachd.AppendJSONFloat(nil, f)
	if ok != (err == nil) || ok && string(got) != string(want) {
		t.Errorf("%v: %s, %v; json.Marshal %s, %v", f, got, ok, want, err)
	}
}
