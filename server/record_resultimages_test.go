package server_test

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestRecordedScreenshotsNextTurn: an app that runs its own loop records
// tool rounds whose results hold a screenshot, then its user goes on in
// coachd's own chat. The turn's estimate read each screenshot's base64 as
// text (200 KB of it, about 67,000 tokens, where the API bills an image
// about 1,600), so 22 of them asked a 1.5M-token reservation and the next
// turn was a 402 on a budget the real cost fits many times; and every
// screenshot went back to the API. The turn runs, priced by the picture,
// and re-sends at most the window's 20 images, with no summary call for
// a history that is mostly pictures.
func TestRecordedScreenshotsNextTurn(t *testing.T) {
	e := MustBudgetEnv(t, server.Limits{})
	pf := seed000Preflight(t, e, "check my screens")
	shot := base64.StdEncoding.EncodeToString(noisePNG(t, 200<<10))
	var msgs []string
	for i := range 22 {
		id := fmt.Sprintf("toolu_shot%02d", i)
		msgs = append(msgs,
			fmt.Sprintf(`{"role":"user","content_blocks":[{"type":"text","text":"screen %d?"}]}`, i),
			fmt.Sprintf(`{"role":"assistant","content_blocks":[{"type":"tool_use","id":%q,"name":"screenshot","input":{}}]}`, id),
			fmt.Sprintf(`{"role":"user","content_blocks":[{"type":"tool_result","tool_use_id":%q,"content":[{"type":"text","text":"screen %d"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":%q}}]}]}`, id, i, shot),
			`{"role":"assistant","content_blocks":[{"type":"text","text":"Looks fine."}]}`)
	}
	body := fmt.Sprintf(`{"session_id":%q,"reservation_id":%q,"tokens_used":300,"messages":[%s]}`, pf.SessionID, pf.ReservationID, strings.Join(msgs, ","))
	if r := e.post(e.alice.key, "/v1/chat/record", body, nil, nil); r.status != 200 {
		t.Fatalf("record: %d %.300s", r.status, r.body)
	}
	before := len(e.fake.Requests())
	r := e.post(e.alice.key, "/v1/chat", `{"message":"and overall?","session_id":"`+pf.SessionID+`"}`, nil, nil)
	if r.status != 200 {
		t.Fatalf("the next turn: %d %.400s", r.status, r.body)
	}
	// One call: 20 images (about 32,000 tokens) and a little text are no
	// history to summarize, as 4 MB of base64 read as text was.
	reqs := e.fake.Requests()
	if len(reqs) != before+1 {
		t.Fatalf("the turn made %d model calls, want 1", len(reqs)-before)
	}
	last := reqs[len(reqs)-1].Raw
	if n := bytes.Count(last, []byte(`"type":"image"`)); n > 20 || n == 0 {
		t.Fatalf("the turn re-sent %d images", n)
	}
}
