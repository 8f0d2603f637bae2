package coachd

import (
	"math"
	"strconv"
)

// AppendJSONFloat appends f as encoding/json writes a float64 (ES6 number
// formatting: an exponent below 1e-6 and from 1e21, written 1e-7 rather
// than 1e-07). It reports false, appending nothing, for NaN and the
// infinities, which encoding/json refuses.
func AppendJSONFloat(dst []byte, f float64) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, false
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		// 1e-07 → 1e-7, as encoding/json cleans it.
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst, true
}
