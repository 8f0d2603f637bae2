package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
)

// A user with more files than one listing holds (coachd.MaxPageLimit of
// the coachd.MaxFilesPerUser they may keep) still has the files written
// long ago: the overview a life mapping saved stays a standing file, and
// the life-mapping skill (missing_file: overview) does not load again.
func TestContextOlderFilesThanOneListing(t *testing.T) {
	db, clock, u, sess := fixtureUser(t)
	ctx := context.Background()
	now := clock.Now()
	for i := range coachd.MaxPageLimit {
		clock.Set(now.Add(-time.Duration(coachd.MaxPageLimit-i) * time.Minute))
		f := &coachd.File{UserID: u.ID, Type: "capture", Name: fmt.Sprintf("c-%03d", i), Content: "idea"}
		if err := db.SaveFile(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	clock.Set(now)
	a, _ := sagePack(t).Agent("sage")
	d, err := gather(ctx, db, u, sess, now, a.Context)
	if err != nil {
		t.Fatal(err)
	}
	system, _ := systemPrompt(a, d)
	got := system[1].Text
	if !strings.Contains(got, `path="overview/overview"`) {
		t.Errorf("the overview is missing from <standing_files>:\n%.2000s", got)
	}
	if strings.Contains(got, `<skill name="life-mapping">`) {
		t.Errorf("life-mapping (missing_file: overview) loaded for a user who has an overview")
	}
	if d.now.Location().String() != "Europe/Paris" {
		t.Errorf("zone %s, want Europe/Paris from the profile file", d.now.Location())
	}
}
