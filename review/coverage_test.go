package review

import (
	"slices"
	"testing"
)

// The seed's approval names its requirements in its own words ("Token
// refresh" for "Support token refresh"); an entry names one requirement.
func TestUncovered(t *testing.T) {
	reqs := []string{"1. Implement OAuth2 flow with PKCE", "Support token refresh", "Store tokens securely."}
	for _, tc := range []struct {
		verified []string
		want     []string
	}{
		{[]string{"OAuth2 flow with PKCE", "Token refresh", "store tokens  securely"}, nil},
		{[]string{"OAuth2 flow with PKCE", "Token refresh"}, []string{"Store tokens securely."}},
		{nil, reqs},
		{[]string{"Token refresh", "Token refresh", "Token refresh"}, []string{reqs[0], reqs[2]}},
		{[]string{"", "OAuth2 flow with PKCE, token refresh, store tokens securely"}, reqs[:2]},
	} {
		if got := uncovered(reqs, tc.verified); !slices.Equal(got, tc.want) {
			t.Errorf("uncovered(%q) = %q, want %q", tc.verified, got, tc.want)
		}
	}
}
