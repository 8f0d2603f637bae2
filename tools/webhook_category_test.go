package tools_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/tools"
)

// TestWebhookCategory: a webhook tool runs like any instant tool. A tool
// file asking for another category (interactive: end the turn and wait
// for the user) was accepted and ignored; it is a problem at its line.
func TestWebhookCategory(t *testing.T) {
	const file = "name: book\ndescription: Book a ride.\nurl: https://example.com/book\n"
	getenv := func(string) string { return "" }
	for _, c := range []string{"interactive", "lifecycle", "approval"} {
		_, err := tools.ParseWebhook("tools/book.yaml", []byte(file+"category: "+c+"\n"), getenv, nil)
		if err == nil || !strings.Contains(err.Error(), "tools/book.yaml:4: category") {
			t.Errorf("category %s: %v, want a problem at tools/book.yaml:4", c, err)
		}
	}
	if _, err := tools.ParseWebhook("tools/book.yaml", []byte(file+"category: instant\n"), getenv, nil); err != nil {
		t.Errorf("category instant: %v", err)
	}
}
