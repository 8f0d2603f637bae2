package review

import (
	"encoding/json"
	"fmt"
	"strings"

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
// left out of that check. Other fields are the player's own and pass on
// to the coach as they are. An empty report is none.
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
	return errs
}
