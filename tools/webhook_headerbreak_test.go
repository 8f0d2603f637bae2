package tools_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/tools"
)

// TestWebhookHeaderLineBreak: a header whose ${ENV} value ends in a line
// break (a key read from a file, a Kubernetes secret) passed pack
// validation, and then every call failed ("invalid header field value").
// It is a pack problem naming the header, as it is for MCP servers, and
// the value is not shown.
func TestWebhookHeaderLineBreak(t *testing.T) {
	const key = "sk_live_9f8e7d6c5b4a"
	src := "name: lookup_zone\ndescription: Look up a zone.\nurl: https://zones.example.com/zones\n" +
		"headers:\n  Authorization: Bearer ${ZONE_API_KEY}\n"
	_, err := tools.ParseWebhook("tools/lookup_zone.yaml", []byte(src), func(string) string { return key + "\n" }, nil)
	if err == nil {
		t.Fatal("a header with a line break loaded")
	}
	if want := "tools/lookup_zone.yaml:5: header Authorization has a line break"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), key) {
		t.Errorf("the value shows in %q", err)
	}
}
