package server_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/coachd/coachd/server"
)

// TestSeed001RealtimeToken plays seed 001's voice client ("Enabling
// Voice", lines 290-300): it POSTs {snapshotId, userId, strategyId} to
// /api/realtime/token (here /v1/realtime/token) with no Content-Type, and
// opens `wss://api.openai.com/v1/realtime?model=${model}&token=${token}`
// with the answer's token and model. The token must be the minted
// secret, or the client connects with token=undefined.
func TestSeed001RealtimeToken(t *testing.T) {
	e := mustVoiceEnv(t, server.Limits{}, voiceKey)
	r := e.post(e.alice.key, "/v1/realtime/token", `{"snapshotId":"snap_1","userId":"u_1","strategyId":"strat_1"}`,
		map[string]string{"Content-Type": "text/plain;charset=UTF-8"}, nil)
	if r.status != 200 {
		t.Fatalf("token = %d %s", r.status, r.body)
	}
	noKey(t, r)
	var got struct {
		Token        *string `json:"token"`
		Model        *string `json:"model"`
		ClientSecret struct {
			Value string `json:"value"`
		} `json:"client_secret"`
	}
	if err := json.Unmarshal(r.body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Token == nil || got.Model == nil {
		t.Fatalf("no token or model for the client's WebSocket URL: %s", r.body)
	}
	ws := "wss://api.openai.com/v1/realtime?model=" + *got.Model + "&token=" + *got.Token
	u, err := url.Parse(ws)
	if err != nil {
		t.Fatal(err)
	}
	if tok := u.Query().Get("token"); tok != got.ClientSecret.Value || !strings.HasPrefix(tok, "ek_") {
		t.Fatalf("the client connects with token %q, want the minted secret %q", tok, got.ClientSecret.Value)
	}
	if u.Query().Get("model") == "" {
		t.Fatalf("the client connects with no model: %s", ws)
	}
}
