package server_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestReviewPlayerReportShape: POST /v1/reviews checked only that
// player_report was a JSON object, so a report in the wrong shape was
// taken silently: files_modified as one string, or naming a path out of
// the workspace, was dropped from the check of what the approval's test
// runs must cover, and tests written as numbers reached the coach as if
// fine. The fields the seed's contract reads (files_modified,
// tests_written and concerns: lists of strings; implementation_notes: a
// string) are now checked at the edge: 400 invalid_request naming the
// field, before the model is called. Other fields (a player's
// files_created, tests_run…) are the player's to add and pass through.
func TestReviewPlayerReportShape(t *testing.T) {
	e, _ := reviewEnv(t)
	before := len(e.fake.Requests())
	many, _ := json.Marshal(make([]string, 1001))
	for _, c := range []struct{ report, field string }{
		{`{"files_modified":"slug.go"}`, "player_report.files_modified"},
		{`{"files_modified":["slug.go",7]}`, "player_report.files_modified[1]"},
		{`{"files_modified":["../bob/x.go"]}`, "player_report.files_modified[0]"},
		{`{"files_modified":["pkg/../../x.go"]}`, "player_report.files_modified[0]"},
		{`{"files_modified":["/etc/passwd"]}`, "player_report.files_modified[0]"},
		{`{"files_modified":[""]}`, "player_report.files_modified[0]"},
		{`{"files_modified":` + strings.ReplaceAll(string(many), `""`, `"a.go"`) + `}`, "player_report.files_modified"},
		{`{"tests_written":[1,2]}`, "player_report.tests_written[0]"},
		{`{"tests_written":{"name":"TestX"}}`, "player_report.tests_written"},
		{`{"implementation_notes":42}`, "player_report.implementation_notes"},
		{`{"concerns":"none"}`, "player_report.concerns"},
		{`{"concerns":[null]}`, "player_report.concerns[0]"},
	} {
		body := fmt.Sprintf(`{"task_id":"TASK-7","requirements":["slugs"],"player_report":%s,"workspace":"sample"}`, c.report)
		r := e.post(e.alice.key, "/v1/reviews", body, nil, nil)
		var got struct {
			Error struct {
				Code    string `json:"code"`
				Details []struct {
					Field string `json:"field"`
				} `json:"details"`
			} `json:"error"`
		}
		json.Unmarshal(r.body, &got)
		if r.status != 400 || got.Error.Code != "invalid_request" || len(got.Error.Details) == 0 || got.Error.Details[0].Field != c.field {
			t.Errorf("report %.80s: %d %.300s, want 400 invalid_request naming %s", c.report, r.status, r.body, c.field)
		}
	}
	if n := len(e.fake.Requests()); n != before {
		t.Fatalf("refused reviews reached the model %d times", n-before)
	}
	// The seed's report, with a field of the player's own, is taken.
	ok := `{"task_id":"TASK-7","requirements":["slugs"],"workspace":"sample","player_report":` +
		`{"files_modified":["slug.go"],"tests_written":["TestSlugify"],"implementation_notes":"done","concerns":[],"files_created":["x.go"]}}`
	if r := e.post(e.alice.key, "/v1/reviews", ok, nil, nil); r.status != 200 {
		t.Fatalf("the seed's report: %d %s", r.status, r.body)
	}
}
