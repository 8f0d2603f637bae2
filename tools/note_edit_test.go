package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// TestUpdateNoteMarketSlug: save_note takes seed 001's market_slug, and
// update_note, "Correct or refine a saved note … Only the fields given
// change", offered no way to correct it: its schema had no market_slug
// (additionalProperties false refused the call), and the tool dropped
// the field. It now changes it, checked like save_note's.
func TestUpdateNoteMarketSlug(t *testing.T) {
	env := storeEnv(t)
	ctx := context.Background()
	n := &coachd.Note{UserID: env.User.ID, Type: "tip", Title: "Airport", Content: "Stage at lot B", Importance: 50, MarketSlug: "dallas-tx"}
	if err := env.Store.CreateNote(ctx, n); err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(tools.UpdateNote{}.Definition().InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if _, ok := schema.Properties["market_slug"]; !ok {
		t.Errorf("update_note's schema has no market_slug: %s", tools.UpdateNote{}.Definition().InputSchema)
	}
	r := exec(t, tools.UpdateNote{}, env, `{"note_id":"`+n.ID+`","market_slug":"fort-worth-tx"}`)
	got, err := env.Store.FindNote(ctx, env.User.ID, n.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.IsError || got.MarketSlug != "fort-worth-tx" {
		t.Errorf("update_note market_slug: %+v; stored %q", r, got.MarketSlug)
	}
	r = exec(t, tools.UpdateNote{}, env, `{"note_id":"`+n.ID+`","market_slug":"Fort Worth"}`)
	if !r.IsError || !strings.Contains(r.Content, "market_slug") {
		t.Errorf("update_note with a bad market_slug: %+v", r)
	}
}
