package agent_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/agent"
)

func TestActionTagsSplit(t *testing.T) {
	text := `Got it. [SAVE_NOTE: {"note_type": "preference", "title": "Mornings [early]", "content": "likes \"5am\" }"}] More. [not a tag] [X: y] [ZONE_INTEL:{"zone_name":"A"}]`
	wantText := `Got it.  More. [not a tag] [X: y] `
	// Every split into two pieces, and one rune at a time.
	splits := [][]string{}
	for i := 0; i <= len(text); i++ {
		splits = append(splits, []string{text[:i], text[i:]})
	}
	splits = append(splits, strings.Split(text, ""))
	for _, pieces := range splits {
		var f agent.TagFilter
		var out strings.Builder
		for _, p := range pieces {
			out.WriteString(f.Write(p))
		}
		out.WriteString(f.Flush())
		tags := f.Tags()
		if out.String() != wantText {
			t.Fatalf("pieces %q: visible %q", pieces, out.String())
		}
		if len(tags) != 2 || tags[0].Tool() != "save_note" || tags[1].Name != "ZONE_INTEL" || !strings.Contains(string(tags[0].Payload), `5am`) {
			t.Fatalf("pieces %q: tags %+v", pieces, tags)
		}
	}
}

func TestActionTagsHeldUntilDecided(t *testing.T) {
	var f agent.TagFilter
	if got := f.Write("Hello [SAVE_NO"); got != "Hello " {
		t.Fatalf("got %q", got)
	}
	if got := f.Write("TE: {\"a\": 1"); got != "" {
		t.Fatalf("partial tag leaked: %q", got)
	}
	if got := f.Flush(); got != `[SAVE_NOTE: {"a": 1` {
		t.Fatalf("unterminated tag must come back as text, got %q", got)
	}
}

func FuzzActionTags(f *testing.F) {
	for _, s := range []string{
		`a [SAVE_NOTE: {"x":1}] b`, `[A_B:{"s":"]}"}]`, `[[[`, `[SAVE_NOTE: {"a":[1,{"b":"}"}]}`, `[Z9: {}]`, "[ZONE_INTEL:\n{}\n]",
	} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		whole, tags := agent.StripActionTags(s)
		if n <= 0 {
			n = 1
		}
		var tf agent.TagFilter
		var out strings.Builder
		for i := 0; i < len(s); i += n {
			out.WriteString(tf.Write(s[i:min(i+n, len(s))]))
		}
		out.WriteString(tf.Flush())
		if out.String() != whole {
			t.Fatalf("streamed %q, whole %q", out.String(), whole)
		}
		if got := tf.Tags(); len(got) != len(tags) {
			t.Fatalf("streamed %d tags, whole %d", len(got), len(tags))
		}
		if len(whole) > len(s) {
			t.Fatalf("output longer than input")
		}
	})
}

// TestActionTagLargestNote: the largest note save_note accepts (5,000
// characters of content, 200 of title, each up to 4 bytes in UTF-8 and
// more when the model escapes them) is a tag, not text shown to the user.
func TestActionTagLargestNote(t *testing.T) {
	title := strings.Repeat("\u00e9", 200)
	for _, content := range []string{strings.Repeat("\U0001F697", 5000), strings.Repeat(`\u00e9`, 5000)} {
		tag := `[SAVE_NOTE: {"note_type": "tip", "title": "` + title + `", "content": "` + content + `", "importance": 100, "market_slug": "` + strings.Repeat("a", 100) + `"}]`
		text, tags := agent.StripActionTags("Saved. " + tag + " Done.")
		if text != "Saved.  Done." || len(tags) != 1 {
			t.Fatalf("a %d-byte tag: %d tags, text of %d bytes", len(tag), len(tags), len(text))
		}
	}
}
