package voice_test

import (
	"context"
	"strings"
	"testing"

	"github.com/coachd/coachd/voice"
)

// TestSecurityProviderErrorLogBounded: the voice provider's error body
// was logged up to 16 KiB a failed call, its control characters (a
// terminal escape) included; it is logged cut to a few hundred bytes of
// clean text, its start (what failed) kept and the key still redacted.
func TestSecurityProviderErrorLogBounded(t *testing.T) {
	c, fake, logs := newClient(t, key)
	fake.Fail(500, "upstream said: bad \x1b[31m"+key+" "+strings.Repeat("é", 8000))
	if _, err := c.Mint(context.Background(), voice.SessionRequest{}); err == nil {
		t.Fatal("a failed mint returned no error")
	}
	got := logs.String()
	if len(got) > 1500 || strings.Contains(got, `\x1b`) || strings.Contains(got, "\x1b") {
		t.Errorf("log is not bounded clean text (%d bytes): %.300s", len(got), got)
	}
	if !strings.Contains(got, "upstream said: bad") || strings.Contains(got, key) {
		t.Errorf("log %.300s lost what failed, or shows the key", got)
	}
}
