package coachd_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/coachd/coachd"
)

func TestUpstreamText(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		max      int
		want     string
	}{
		{"OK", "overloaded_error", 100, "overloaded_error"},
		{"Controls", "a\x00b\nc\x1b[31md\u202ee\u2028f\x7f", 100, "a b c [31md e f "},
		{"NotUTF8", "a\xffb", 100, "a b"},
		{"Cut", strings.Repeat("x", 20), 10, "xxxxxxx…"},
		{"CutOnRune", strings.Repeat("é", 20), 10, "ééé…"},
		{"Fits", strings.Repeat("é", 5), 10, "ééééé"},
		{"TooSmall", "abcdef", 2, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := coachd.UpstreamText(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("UpstreamText(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if len(got) > tt.max || !utf8.ValidString(got) {
				t.Errorf("%q is over %d bytes or not UTF-8", got, tt.max)
			}
		})
	}
}
