package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/coachd/coachd"
	"github.com/coachd/coachd/anthropic/anthropictest"
	"github.com/coachd/coachd/server"
	"github.com/coachd/coachd/sqlstore/pgtest"
)

// aheadClock is a replica's clock running d ahead of the real one.
type aheadClock time.Duration

func (d aheadClock) Now() time.Time { return time.Now().Add(time.Duration(d)) }

// TestRateWindowClockPG: a replica whose clock runs ahead counts a
// user's turns in the rate window the database's clock is in, the one
// the other replicas count in (sqlstore's TestLimitWindowClockPG), both
// apart (a new session's turn) and in a turn's admission, and its tool
// calls (POST /v1/tools/execute) too. The server gave the store its own
// clock's window: 90 min ahead, a user whose hourly limit of 2 was used
// up elsewhere had 2 more turns, and 2 more tool calls, on it.
func TestRateWindowClockPG(t *testing.T) {
	const per = time.Hour
	e := mustChatEnvDepsOn(t, pgtest.NewDatabase(t), func(d *server.Deps) {
		d.Limits = server.Limits{Rate: coachd.RateLimit{N: 2, Per: per}, ToolRate: coachd.RateLimit{N: 2, Per: per}}
		d.Clock = aheadClock(90 * time.Minute)
	}, nil)
	e.fake.SetScript(func(*anthropictest.Request) anthropictest.Reply { return anthropictest.Text("Hi!", 5) })
	ctx := context.Background()
	key := "rate/" + per.String()
	for i := range 3 {
		u := e.MustUser(fmt.Sprintf("skew%d", i))
		s, err := u.c.CreateSession(ctx, "", "")
		if err != nil {
			t.Fatal(err)
		}
		// The user's two turns elsewhere, on a replica on the database's
		// clock.
		window := time.Now().Truncate(per)
		for _, k := range []string{key, "tool_" + key} {
			for range 2 {
				if _, ok, err := e.db.HitLimit(ctx, u.ID, coachd.LimitHit{Key: k, Window: window, Per: per, Limit: 2}); err != nil || !ok {
					t.Fatalf("refused under the limit: %v", err)
				}
			}
		}
		admitted := e.chat(ctx, u.key, "", fmt.Sprintf(`{"message":"more","session_id":%q}`, s.ID))
		apart := e.chat(ctx, u.key, "", `{"message":"new"}`)
		tool := e.do(request{method: "POST", path: "/v1/tools/execute", key: u.key, body: `{"tool_name":"list_notes","tool_input":{}}`})
		if !time.Now().Truncate(per).Equal(window) {
			continue // the hour turned meanwhile: again, with a new user
		}
		for name, got := range map[string]stream{"admission": admitted, "apart": apart} {
			if o := outcome(got); o != "status "+coachd.ERATELIMITED {
				t.Errorf("a turn counted in its %s on a replica 90 min ahead, over a limit of 2 used up: %s", name, o)
			}
		}
		if tool.status != http.StatusTooManyRequests {
			t.Errorf("a tool call on a replica 90 min ahead, over a limit of 2 used up: %d %s", tool.status, tool.body)
		}
		return
	}
	t.Fatal("the hour turned during each of 3 runs")
}
