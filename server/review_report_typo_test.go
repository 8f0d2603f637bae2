package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestReviewPlayerReportMisspelt: a player_report field the seed's
// contract reads, misspelt (files_modifed, filesModified, concern), was
// taken for a field of the player's own and passed on: the review went
// ahead as if the player had reported no files, and the check of what
// the approval's test runs must cover left them out (in a workspace
// without git, the report is all it has). A field one or two letters,
// or only case and underscores, away from a contract field is now 400
// invalid_request naming it and the field it means, before the model is
// called; the player's own fields (files_created, tests_run, summary)
// pass on as before.
func TestReviewPlayerReportMisspelt(t *testing.T) {
	e, _ := reviewEnv(t)
	before := len(e.fake.Requests())
	for _, c := range []struct{ field, want string }{
		{"files_modifed", "files_modified"},
		{"filesModified", "files_modified"},
		{"Files_Modified", "files_modified"},
		{"file_modified", "files_modified"},
		{"tests_writen", "tests_written"},
		{"implementation_note", "implementation_notes"},
		{"concern", "concerns"},
	} {
		body := fmt.Sprintf(`{"task_id":"TASK-7","requirements":["slugs"],"player_report":{%q:["slug.go"]},"workspace":"sample"}`, c.field)
		r := e.post(e.alice.key, "/v1/reviews", body, nil, nil)
		var got struct {
			Error struct {
				Code    string `json:"code"`
				Details []struct {
					Field   string `json:"field"`
					Message string `json:"message"`
				} `json:"details"`
			} `json:"error"`
		}
		json.Unmarshal(r.body, &got)
		if r.status != 400 || got.Error.Code != "invalid_request" || len(got.Error.Details) == 0 ||
			got.Error.Details[0].Field != "player_report."+c.field || !strings.Contains(got.Error.Details[0].Message, c.want) {
			t.Errorf("report field %s: %d %.300s, want 400 invalid_request naming player_report.%s and %s", c.field, r.status, r.body, c.field, c.want)
		}
	}
	if n := len(e.fake.Requests()); n != before {
		t.Fatalf("refused reviews reached the model %d times", n-before)
	}
	ok := `{"task_id":"TASK-7","requirements":["slugs"],"workspace":"sample","player_report":` +
		`{"files_modified":["slug.go"],"files_created":["x.go"],"tests_run":["TestSlugify"],"summary":"done"}}`
	if r := e.post(e.alice.key, "/v1/reviews", ok, nil, nil); r.status != 200 {
		t.Fatalf("a report with the player's own fields: %d %s", r.status, r.body)
	}
}
