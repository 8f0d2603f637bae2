package tools_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/tools"
)

// TestWebhookHeaderProblemLine: a problem in one of a webhook's headers
// (a missing or refused ${NAME}, a bad name, a line break) named the line
// of `headers:`, not the header's own, so a tool with several headers
// pointed every problem at the same line.
func TestWebhookHeaderProblemLine(t *testing.T) {
	yaml := "name: zone\ndescription: Zones.\nurl: https://zones.example.com/hook\nheaders:\n" +
		"  X-Ok: fine\n  X-Crm: ${CRM_TOKEN}\n  Authorization: Bearer ${ANTHROPIC_API_KEY}\n  X-Nl: ${NL}\n"
	env := map[string]string{"NL": "line\nbreak", "ANTHROPIC_API_KEY": "sk-ant-own"}
	_, err := tools.ParseWebhook("tools/zone.yaml", []byte(yaml), func(k string) string { return env[k] }, nil)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"tools/zone.yaml:6: environment variable CRM_TOKEN is not set",
		"tools/zone.yaml:7: ${ANTHROPIC_API_KEY} is coachd's own secret",
		"tools/zone.yaml:8: header X-Nl has a line break",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in:\n%v", want, err)
		}
	}
}
