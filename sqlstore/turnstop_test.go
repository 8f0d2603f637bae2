package sqlstore_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/coachd/coachd"
)

// TestSetTurnStop: the turn's own stop reason is merged into its last
// reply's metadata (the model's stop_reason and tool_calls kept), on the
// user's own assistant messages only.
func TestSetTurnStop(t *testing.T) {
	ctx := context.Background()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			db := MustOpen(t, b.newDSN(t), newClock())
			u := MustCreateUser(t, db, "a")
			other := MustCreateUser(t, db, "b")
			s := MustCreateSession(t, db, u.ID)
			msgs := []*coachd.Message{
				{Role: coachd.RoleUser, Content: "hello"},
				{Role: coachd.RoleAssistant, Content: "On it.",
					Metadata: json.RawMessage(`{"stop_reason":"tool_use","tool_calls":[{"name":"save_note","input":{}}]}`)},
			}
			if err := db.AppendMessages(ctx, u.ID, s.ID, msgs); err != nil {
				t.Fatal(err)
			}
			t.Run("OK", func(t *testing.T) {
				if err := db.SetTurnStop(ctx, u.ID, s.ID, msgs[1].ID, coachd.TurnMaxRounds); err != nil {
					t.Fatal(err)
				}
				got, _, err := db.ListMessages(ctx, u.ID, s.ID, coachd.Page{})
				if err != nil || len(got) != 2 {
					t.Fatalf("ListMessages = %d, %v", len(got), err)
				}
				var meta struct {
					StopReason     string            `json:"stop_reason"`
					TurnStopReason string            `json:"turn_stop_reason"`
					ToolCalls      []json.RawMessage `json:"tool_calls"`
				}
				if err := json.Unmarshal(got[1].Metadata, &meta); err != nil {
					t.Fatal(err)
				}
				if meta.StopReason != "tool_use" || meta.TurnStopReason != "max_rounds" || len(meta.ToolCalls) != 1 {
					t.Errorf("metadata = %s, want the model's stop_reason and tool_calls kept, turn_stop_reason max_rounds", got[1].Metadata)
				}
			})
			t.Run("ErrOtherUser", func(t *testing.T) {
				wantCode(t, db.SetTurnStop(ctx, other.ID, s.ID, msgs[1].ID, coachd.TurnDeadline), "not_found")
			})
			t.Run("ErrUserMessage", func(t *testing.T) {
				wantCode(t, db.SetTurnStop(ctx, u.ID, s.ID, msgs[0].ID, coachd.TurnDeadline), "not_found")
			})
			t.Run("ErrReason", func(t *testing.T) {
				wantCode(t, db.SetTurnStop(ctx, u.ID, s.ID, msgs[1].ID, ""), "invalid_request")
			})
		})
	}
}
