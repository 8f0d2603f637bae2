// Package slug turns titles into URL slugs.
package slug

import "strings"

// Slugify returns s as a URL slug: "Hello, World!" is "hello-world".
func Slugify(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
