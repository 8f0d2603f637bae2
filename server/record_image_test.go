package server_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestRecordLargeImage: record takes image blocks up to the attachment
// size (README, "checked by their bytes as attachments are"), so its body
// must hold one: a 1.5 MB photo was refused as 413 by the 1 MiB bound of
// other JSON routes. A body past the chat's bound is still a 413.
func TestRecordLargeImage(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "what about this screenshot?")
	photo := base64.StdEncoding.EncodeToString(noisePNG(t, 1500<<10))
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":300,"messages":[
		{"role":"user","content_blocks":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":%q}},{"type":"text","text":"what about this screenshot?"}]},
		{"role":"assistant","content_blocks":[{"type":"text","text":"Your boost use is low."}]}]}`, pf.SessionID, pf.ReservationID, photo)
	if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
		t.Fatalf("record with a %d-byte photo: %d %.300s", len(photo)*3/4, r.status, r.body)
	}
	msgs, err := e.db.History(t.Context(), e.alice.ID, pf.SessionID)
	if err != nil || len(msgs) != 2 || msgs[0].Blocks[0].Type != "image" {
		t.Fatalf("history: %v, %v", msgs, err)
	}
	huge := `{"session_id":"` + pf.SessionID + `","messages":[],"pad":"` + strings.Repeat("a", server.ChatMaxBodyBytes) + `"}`
	if r := e.post(e.alice.key, "/v1/chat/record", huge, nil, nil); r.status != 413 {
		t.Errorf("a body past %d bytes: %d, want 413", server.ChatMaxBodyBytes, r.status)
	}
}
