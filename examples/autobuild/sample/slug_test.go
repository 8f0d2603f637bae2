package slug

import "testing"

func TestSlugify(t *testing.T) {
	for in, want := range map[string]string{
		"Hello":          "hello",
		"Hello, World!":  "hello-world",
		"  spaces  ":     "spaces",
		"a--b__c":        "a-b-c",
		"!!!":            "",
		"Go 1.26 is out": "go-1-26-is-out",
	} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
}
