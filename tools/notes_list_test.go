package tools_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/tools"
)

// TestListNotesMarketSlug: a note saved for one market (seed 001's
// market_slug, "dallas-tx") is recalled with it: list_notes showed two
// drivers' tips for two markets alike, and the model could not tell
// which market a note was for, nor correct it with update_note.
func TestListNotesMarketSlug(t *testing.T) {
	env := storeEnv(t)
	ctx := context.Background()
	for _, slug := range []string{"dallas-tx", ""} {
		n := &coachd.Note{UserID: env.User.ID, Type: "tip", Title: "Airport " + slug, Content: "Stage at lot B", Importance: 50, MarketSlug: slug}
		if err := env.Store.CreateNote(ctx, n); err != nil {
			t.Fatal(err)
		}
	}
	r := exec(t, tools.ListNotes{}, env, `{}`)
	var out struct {
		Notes []map[string]any `json:"notes"`
	}
	if err := json.Unmarshal([]byte(r.Content), &out); err != nil || r.IsError || len(out.Notes) != 2 {
		t.Fatalf("list_notes: %+v (%v)", r, err)
	}
	slugs := map[string]any{}
	for _, n := range out.Notes {
		slugs[n["title"].(string)] = n["market_slug"]
	}
	if slugs["Airport dallas-tx"] != "dallas-tx" || slugs["Airport "] != nil {
		t.Errorf("market_slug per note: %v\n%s", slugs, r.Content)
	}
}
