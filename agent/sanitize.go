package agent

import (
	"regexp"
	"strings"
)

// LegacyTags are the text-block tags coaches wrote before they had tools.
// Stored documents and notes may still hold them; Sanitize removes them so
// a stale tag never re-enters a prompt and is taken as an instruction.
var LegacyTags = []string{
	"FILE_UPDATE", "SUGGESTED_REPLIES", "DAY_PLAN_DATA", "ENTER_MODE", "EXIT_MODE",
	"REFLECTION_PROMPT", "SESSION_COMPLETE", "PULSE_CHECK", "JOURNAL_DATA", "OPTIONS",
}

// sectionTags are the XML-style tags the context pipeline wraps sections
// in; injected text must not open or close one.
var sectionTags = []string{
	"session_context", "skills", "active_skills", "skill", "standing_files", "recent_files",
	"file", "notes", "note", "data_schema",
}

var (
	legacyBlockRes []*regexp.Regexp
	legacyTagRe    = regexp.MustCompile(`\[/?(?:` + strings.Join(LegacyTags, "|") + `)(?:[ \t:=][^\]\n]*)?\]`)
	legacyBareRe   = regexp.MustCompile(`\[/?(?:` + strings.Join(LegacyTags, "|") + `)\b`)
	sectionTagRe   = regexp.MustCompile(`(?i)<(/?\s*(?:` + strings.Join(sectionTags, "|") + `)\b)`)
)

func init() {
	for _, name := range LegacyTags {
		legacyBlockRes = append(legacyBlockRes,
			regexp.MustCompile(`(?s)\[`+name+`(?:[ \t:=][^\]\n]*)?\].*?\[/`+name+`\]`))
	}
}

// Sanitize returns text without legacy tag blocks ([FILE_UPDATE ...]...
// [/FILE_UPDATE], [SUGGESTED_REPLIES]...), stray legacy tags, action tags
// ([SAVE_NOTE: {...}]) and with the context pipeline's own section tags
// defused (< becomes &lt;). It repeats until nothing changes, so removing
// one tag can never assemble another: Sanitize(Sanitize(s)) ==
// Sanitize(s).
func Sanitize(text string) string {
	for range 100 {
		prev := text
		text, _ = StripActionTags(text)
		for _, re := range legacyBlockRes {
			text = re.ReplaceAllString(text, "")
		}
		text = legacyTagRe.ReplaceAllString(text, "")
		text = legacyBareRe.ReplaceAllString(text, "")
		text = sectionTagRe.ReplaceAllString(text, "&lt;$1")
		if text == prev {
			return text
		}
	}
	// Unreachable in practice: every pass that changes the text shortens
	// it or removes a '<'. Fail closed.
	return ""
}
