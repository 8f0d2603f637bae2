package review

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPlayerReportBounded: the player's report goes whole into the
// coach's first message. A player whose turn ended in megabytes of text
// (its rounds echoing a worker's output: one huge line, no JSON) handed
// all of it on, and text full of braces that never close (a worker's
// nested output) took the report's search cubic time.
func TestPlayerReportBounded(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		text := "Done.\n" + `{"files_modified":["slug.go"],"tests_written":[{"name":"TestSlugify"}],"concerns":[]}` + "\nThanks."
		if got, want := string(playerReport(text)), `{"files_modified":["slug.go"],"tests_written":[{"name":"TestSlugify"}],"concerns":[]}`; got != want {
			t.Fatalf("report %s, want %s", got, want)
		}
	})
	t.Run("HugeProse", func(t *testing.T) {
		text := strings.Repeat("x", 4<<20) + "THE END"
		r := playerReport(text)
		var m map[string]string
		if err := json.Unmarshal(r, &m); err != nil || len(r) > maxPlayerReport+200 || !strings.HasSuffix(m["implementation_notes"], "THE END") {
			t.Fatalf("report of %d bytes (%v), want at most %d ending with the text's end", len(r), err, maxPlayerReport+200)
		}
	})
	t.Run("Escaped", func(t *testing.T) {
		text := strings.Repeat("<\x01", 1<<20)
		var m map[string]string
		if r := playerReport(text); len(r) > maxPlayerReport+200 || json.Unmarshal(r, &m) != nil || !strings.HasSuffix(m["implementation_notes"], "<\x01") {
			t.Fatalf("report of %d bytes", len(r))
		}
	})
	t.Run("HugeJSON", func(t *testing.T) {
		text := `{"implementation_notes":"` + strings.Repeat("y", 1<<20) + `"}`
		if r := playerReport(text); len(r) > maxPlayerReport+200 || !json.Valid(r) {
			t.Fatalf("report of %d bytes", len(r))
		}
	})
	t.Run("UnclosedBraces", func(t *testing.T) {
		// Every '{' opens an object that the '}'s after it never close.
		text := strings.Repeat(`{"a":`, 100_000) + "1" + strings.Repeat("}", 50_000)
		if r := playerReport(text); len(r) > maxPlayerReport+200 || !json.Valid(r) {
			t.Fatalf("report of %d bytes", len(r))
		}
	})
}
