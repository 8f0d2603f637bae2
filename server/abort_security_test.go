package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/client"
)

// TestSecurityAbortCharged: issue 20 finding 5. A client that leaves after
// 195 of 253 deltas pays for the output it was shown, not just the input:
// the charge is in the ledger, the reservation settled, doctor balanced.
func TestSecurityAbortCharged(t *testing.T) {
	e := MustChatEnv(t, nil)
	ctx := context.Background()
	const chunk = 8
	reply := strings.Repeat("drive the airport loop at six, ", 66)[:253*chunk]
	// The stream never ends by itself: only the client's leaving stops it.
	e.fake.Enqueue(anthropictest.Text(reply, chunk).StallAfter(255))
	cctx, cancel := context.WithCancel(ctx)
	deltas, streamed := 0, 0
	sid, _ := e.alice.c.ChatStream(cctx, client.ChatRequest{Message: "plan my evening"}, client.StreamOptions{OnDisconnect: "cancel"}, func(ev client.Event) error {
		if ev.Name == "content_delta" {
			deltas++
			streamed += chunk
			if deltas == 195 {
				cancel()
			}
		}
		return nil
	})
	if deltas < 195 {
		t.Fatalf("the client saw %d deltas", deltas)
	}
	select {
	case <-e.fake.Disconnects():
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream connection was not closed")
	}
	var st *coachd.BudgetStatus
	waitFor(t, func() bool {
		var err error
		st, err = e.db.BudgetStatus(ctx, e.alice.ID)
		return err == nil && st.TokensReserved == 0 && st.TokensUsed > 0
	})
	msgs, _, _ := e.alice.c.Messages(ctx, sid, coachd.Page{})
	if len(msgs) != 2 || !msgs[1].Partial {
		t.Fatalf("stored %+v", msgs)
	}
	// The output part of the charge: at least what the client was shown.
	shown := coachd.TokensOfBytes(streamed)
	entries, err := e.db.Ledger(ctx, e.alice.ID)
	if err != nil {
		t.Fatal(err)
	}
	var charged int64
	for _, le := range entries {
		charged += le.Used
	}
	usage := msgs[1].Usage
	if usage == nil || usage.OutputTokens < shown || charged != st.TokensUsed || charged < usage.InputTokens+shown {
		t.Fatalf("charged %d (ledger) / %d (user), message usage %+v; want output >= %d for %d streamed bytes", charged, st.TokensUsed, usage, shown, streamed)
	}
	if drift, err := e.db.CheckLedger(ctx); err != nil || len(drift) > 0 {
		t.Fatalf("doctor: %+v %v", drift, err)
	}
}
