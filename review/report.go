package review

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"

	"github.com/coachd/coachd"
)

// maxReportList bounds each list of a player's report taken at the edge:
// the coverage check reads no more of files_modified (maxReportFiles).
const maxReportList = maxReportFiles

// CheckPlayerReport checks, at the edge (POST /v1/reviews, coachd
// review --player-report), the fields of a player's report the seed's
// contract reads: files_modified, tests_written and concerns are lists of
// at most 1000 strings, files_modified's each a path inside the workspace
// (the approval's test runs must cover them), implementation_notes a
// string (null, like a field left out, is none). A report in another shape would be taken silently, its files
// left out of that check. So would one of these fields misspelt
// (files_modifed, filesModified): a field a letter or two, or only case
// and separators, away from one of them is refused, naming the field it
// means. Other fields are the player's own and pass on to the coach as
// they are. An empty report is none.
func CheckPlayerReport(report json.RawMessage) []coachd.FieldError {
	if len(report) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(report, &m); err != nil || m == nil {
		return []coachd.FieldError{{Field: "player_report", Message: "must be a JSON object", Code: "type"}}
	}
	var errs []coachd.FieldError
	if raw, ok := m["implementation_notes"]; ok && string(raw) != "null" {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			errs = append(errs, coachd.FieldError{Field: "player_report.implementation_notes", Message: "must be a string", Code: "type"})
		}
	}
	for _, name := range []string{"files_modified", "tests_written", "concerns"} {
		raw, ok := m[name]
		if !ok || string(raw) == "null" { // as the seed's .get() takes it
			continue
		}
		field := "player_report." + name
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil || items == nil {
			errs = append(errs, coachd.FieldError{Field: field, Message: "must be a list of strings", Code: "type"})
			continue
		}
		if len(items) > maxReportList {
			errs = append(errs, coachd.FieldError{Field: field, Message: fmt.Sprintf("must list at most %d entries", maxReportList), Code: "length"})
			continue
		}
		for i, item := range items {
			at := fmt.Sprintf("%s[%d]", field, i)
			var s string
			if len(item) == 0 || item[0] != '"' || json.Unmarshal(item, &s) != nil {
				errs = append(errs, coachd.FieldError{Field: at, Message: "must be a string", Code: "type"})
				break
			}
			if name != "files_modified" {
				continue
			}
			if strings.TrimSpace(s) == "" {
				errs = append(errs, coachd.FieldError{Field: at, Message: "must be a file's path relative to the workspace", Code: "format"})
				break
			}
			if p, err := rel(strings.TrimSpace(s)); err != nil || p == "." {
				errs = append(errs, coachd.FieldError{Field: at, Message: "must be a file's path relative to the workspace, inside it (no absolute path, no .. out of it)", Code: "format"})
				break
			}
		}
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, k := range keys {
		if want := misspelt(k); want != "" {
			errs = append(errs, coachd.FieldError{Field: "player_report." + k,
				Message: fmt.Sprintf("unknown field; did you mean %q? (the seed's report reads files_modified, tests_written, implementation_notes and concerns)", want),
				Code:    "unknown"})
		}
	}
	return errs
}

// reportFields are the fields of a player's report the seed's contract
// reads.
var reportFields = []string{"files_modified", "tests_written", "implementation_notes", "concerns"}

// misspelt is the contract field (reportFields) k is a misspelling of:
// not one of them, but the same once case, '_', '-' and spaces are
// dropped, or within two edits (a letter added, dropped, changed, or two
// swapped) of one; "" when k is none's.
func misspelt(k string) string {
	if slices.Contains(reportFields, k) || len(k) > 40 {
		return ""
	}
	fold := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r == '_' || r == '-' || r == ' ' {
				return -1
			}
			return unicode.ToLower(r)
		}, s)
	}
	for _, f := range reportFields {
		if editDistance(fold(k), fold(f)) <= 2 {
			return f
		}
	}
	return ""
}

// editDistance is the optimal string alignment distance of a and b, by
// runes: insertions, deletions, substitutions and swaps of neighbours.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
