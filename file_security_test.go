package coachd_test

import (
	"testing"

	"github.com/coachd/coachd"
)

// TestSecurityFileNameFormatChars: issue 20 finding 13. File names could
// hold bidi overrides and zero-width characters ("a\u202Egnp.exe\u200B"
// shows as "aexe.png"); every Unicode format character (Cf) and line or
// paragraph separator is now refused wherever a file name is validated.
func TestSecurityFileNameFormatChars(t *testing.T) {
	for _, name := range []string{
		"a\u202Egnp.exe\u200B",                                     // the example: RLO and a zero-width space
		"a\u202Ab", "a\u202Bb", "a\u202Cb", "a\u202Db", "a\u202Eb", // embeddings and overrides
		"a\u2066b", "a\u2067b", "a\u2068b", "a\u2069b", // isolates
		"a\u200Bb", "a\u200Cb", "a\u200Db", "a\u2060b", "\uFEFFab", // zero-width, word joiner, BOM
		"a\u200Eb", "a\u200Fb", "a\u061Cb", "a\u00ADb", // marks, soft hyphen
		"a\u2028b", "a\u2029b", "a\u0085b", "a\x00b", // separators and controls
	} {
		if coachd.ValidFileName(name) {
			t.Errorf("ValidFileName(%q) = true", name)
		}
		f := &coachd.File{Type: "daily-log", Name: name}
		if errs := f.Validate(); len(errs) != 1 || errs[0].Field != "file_name" {
			t.Errorf("Validate(%q) = %v, want one file_name error", name, errs)
		}
		if coachd.ValidFileType(name) {
			t.Errorf("ValidFileType(%q) = true", name)
		}
	}
	for _, name := range []string{"2026-03-01", "Café au lait", "日記", "مرحبا", "plan (v2)"} {
		if !coachd.ValidFileName(name) {
			t.Errorf("ValidFileName(%q) = false, want true", name)
		}
	}
}
