package tools_test

import (
	"net/netip"
	"testing"
)

// Special-purpose ranges that are not the public internet reach a cloud's
// metadata service (Oracle Cloud's at 192.0.0.192), benchmark or NAT64
// networks of the operator's own: refused like private addresses.
func TestSecurityWebhookSpecialPurpose(t *testing.T) {
	p := mustPolicy("")
	for _, s := range []string{"192.0.0.192", "192.0.0.1", "198.18.0.1", "198.19.255.254",
		"64:ff9b:1::a9fe:a9fe", "fec0::1", "::ffff:192.0.0.192"} {
		if err := p.Check("h", netip.MustParseAddr(s)); err == nil {
			t.Errorf("%s allowed by the default policy", s)
		}
	}
	for _, s := range []string{"192.0.1.1", "198.20.0.1", "198.17.255.255", "64:ff9b:2::1"} {
		if err := p.Check("h", netip.MustParseAddr(s)); err != nil {
			t.Errorf("%s refused: %v", s, err)
		}
	}
	if err := mustPolicy("192.0.0.192").Check("h", netip.MustParseAddr("192.0.0.192")); err != nil {
		t.Errorf("allowed 192.0.0.192 refused: %v", err)
	}
}
