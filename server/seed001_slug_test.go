package server_test

import (
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed001ValidateAgreesOnSlugLength: POST /v1/actions/validate is
// seed 001's pre-flight check (line 46: "Pre-flight action validation"):
// a payload it passes must be one the action then runs. A note's
// market_slug is at most 100 characters (coachd.ValidMarketSlug, as
// ZONE_INTEL's), so a longer one is refused at validation, as Zod's
// too_big, not first when the note is saved.
func TestSeed001ValidateAgreesOnSlugLength(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	slug := strings.Repeat("a", 101)
	var out struct {
		OK      bool `json:"ok"`
		Details []struct{ Field, Code string }
	}
	r := e.post(e.alice.key, "/v1/actions/validate", `{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C","market_slug":"`+slug+`"}}`, nil, &out)
	if r.status != 200 || out.OK || len(out.Details) != 1 || out.Details[0].Field != "market_slug" || out.Details[0].Code != "too_big" {
		t.Fatalf("a 101-character market_slug the note store refuses: %d %s", r.status, r.body)
	}
	// The longest slug a note takes still validates.
	r = e.post(e.alice.key, "/v1/actions/validate", `{"action_type":"SAVE_NOTE","payload":{"note_type":"tip","title":"T","content":"C","market_slug":"`+slug[1:]+`"}}`, nil, &out)
	if r.status != 200 || !out.OK {
		t.Fatalf("a 100-character market_slug: %d %s", r.status, r.body)
	}
}
