package coachd_test

import (
	"testing"

	"github.com/coachd/coachd"
)

func TestResolveModel(t *testing.T) {
	for in, want := range map[string]string{
		"sonnet": "claude-sonnet-5-5", " Opus ": "claude-opus-5-5", "haiku": "claude-haiku-5-5",
		"claude-sonnet-4-6": "claude-sonnet-4-6", "CLAUDE-OPUS-4-8": "claude-opus-4-8",
	} {
		if got, ok := coachd.ResolveModel(in); !ok || got != want {
			t.Errorf("ResolveModel(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "gpt-4o", "claude-mythos-preview", "sonnet-5"} {
		if got, ok := coachd.ResolveModel(in); ok {
			t.Errorf("ResolveModel(%q) = %q, accepted", in, got)
		}
	}
	for alias, id := range coachd.ModelAliases() {
		if _, ok := coachd.ResolveModel(id); !ok {
			t.Errorf("alias %s names %s, which is not a known model", alias, id)
		}
	}
}
